/* SPDX-License-Identifier: MIT */
/* Prints rnsc's option table (cfgfile.h) as "scope<TAB>key<TAB>status<TAB>why" lines for
 * tests/live/config_keys_test.sh. Exit 1 when the table is empty or a row is malformed. */
#include <stdio.h>
#include <string.h>

#include "cfgfile.h"

int main(void)
{
	size_t n = 0;
	for (const rnsc_config_key *k; (k = rnsc_config_key_at(n)); n++) {
		const char *st = k->status == RNSC_CFGKEY_HONOURED  ? "honoured"
				 : k->status == RNSC_CFGKEY_REFUSED ? "refused"
								    : NULL;
		if (!st || !k->why || !*k->why || strchr(k->why, '\t') || strchr(k->why, '|') ||
		    rnsc_config_key_find(k->scope, k->key) != k) {
			fprintf(stderr, "cfg_keys_dump: bad or duplicate row %s %s\n", k->scope,
				k->key);
			return 1;
		}
		printf("%s\t%s\t%s\t%s\n", k->scope, k->key, st, k->why);
	}
	return n ? 0 : 1;
}
