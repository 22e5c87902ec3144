/* SPDX-License-Identifier: MIT */
/* Candidate probe for issue 25 (not built by make): see ../README.md. */
void b_sod(void);
void b_net(void);
void b_gcr(void);
void b_wol(void);
int main(void)
{
	b_sod();
	b_net();
	b_gcr();
	b_wol();
	b_sod();
	return 0;
}
