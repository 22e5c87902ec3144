/* SPDX-License-Identifier: MIT */
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "destination.h"
#include "identity.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rnsc id [-g PATH [-f]] [-i PATH] [-p [-P]] [-H ASPECTS] [-x] [-X]\n\n"
		"Reticulum identity tool (the identity-file subset of rnid; key files are the\n"
		"reference's 64-byte private key format and interchangeable with rnid).\n\n"
		"  -g, --generate PATH     generate a new identity and save it to PATH\n"
		"  -f, --force             allow -g to overwrite an existing file\n"
		"  -i, --identity PATH     identity file to operate on\n"
		"  -p, --print-identity    print the identity's hash and public key\n"
		"  -P, --print-private     with -p, also print the private key\n"
		"  -H, --hash ASPECTS      print the destination hash of app.aspects for it\n"
		"  -x, --export-pub        print the public key in hex\n"
		"  -X, --export-prv        print the private key in hex\n"
		"      --crypto LIST       crypto backend order\n"
		"  -h, --help              show this help\n\n"
		"Exit status: 0 on success, 2 on usage errors, 3 when a file cannot be read or\n"
		"written or is not an identity.\n");
}

int cmd_id(int argc, char **argv)
{
	static const struct option opts[] = {
		{"generate", required_argument, NULL, 'g'}, {"force", no_argument, NULL, 'f'},
		{"identity", required_argument, NULL, 'i'}, {"print-identity", no_argument, NULL, 'p'},
		{"print-private", no_argument, NULL, 'P'},  {"hash", required_argument, NULL, 'H'},
		{"export-pub", no_argument, NULL, 'x'},	    {"export-prv", no_argument, NULL, 'X'},
		{"crypto", required_argument, NULL, 'c'},   {"help", no_argument, NULL, 'h'},
		{0, 0, 0, 0}};
	const char *gen = NULL, *path = NULL, *aspects = NULL, *order = NULL;
	int force = 0, print = 0, priv = 0, xpub = 0, xprv = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "g:fi:pPH:xXh", opts, NULL)) != -1) {
		switch (c) {
		case 'g': gen = optarg; break;
		case 'f': force = 1; break;
		case 'i': path = optarg; break;
		case 'p': print = 1; break;
		case 'P': priv = 1; break;
		case 'H': aspects = optarg; break;
		case 'x': xpub = 1; break;
		case 'X': xprv = 1; break;
		case 'c': order = optarg; break;
		case 'h': usage(stdout); return CLI_OK;
		default: usage(stderr); return CLI_USAGE;
		}
	}
	if (optind < argc || (!gen && !path)) {
		usage(stderr);
		return CLI_USAGE;
	}
	cli_env env;
	int rc = cli_env_open(&env, order, 0);
	if (rc)
		return rc;
	rnsc_identity id;
	int ret = CLI_OK;
	char hex[2 * RNSC_KEYSIZE + 1];
	if (gen) {
		struct stat st;
		if (!force && stat(gen, &st) == 0) {
			fprintf(stderr, "rnsc id: %s exists; use -f to overwrite\n", gen);
			ret = CLI_SETUP;
			goto out;
		}
		if ((rc = rnsc_identity_generate(env.ctx, &id)) ||
		    (rc = rnsc_identity_save_file(&id, gen))) {
			fprintf(stderr, "rnsc id: cannot generate %s: %s\n", gen, rnsc_strerror(rc));
			ret = CLI_SETUP;
			goto out;
		}
		cli_hex(hex, id.hash, RNSC_TRUNCATED_HASHLEN);
		printf("New identity <%s> written to %s\n", hex, gen);
		path = path ? path : gen;
		rnsc_identity_free(&id);
	}
	if ((rc = rnsc_identity_load_file(env.ctx, &id, path)) != 0) {
		fprintf(stderr, "rnsc id: cannot load identity from %s: %s\n", path, rnsc_strerror(rc));
		ret = CLI_SETUP;
		goto out;
	}
	uint8_t key[RNSC_KEYSIZE];
	if (print) {
		cli_hex(hex, id.hash, RNSC_TRUNCATED_HASHLEN);
		printf("Identity hash : <%s>\n", hex);
		rnsc_identity_public_bytes(&id, key);
		cli_hex(hex, key, RNSC_KEYSIZE);
		printf("Public key    : %s\n", hex);
		if (priv && rnsc_identity_private_bytes(&id, key) == 0) {
			cli_hex(hex, key, RNSC_KEYSIZE);
			printf("Private key   : %s\n", hex);
		} else if (!priv) {
			printf("Private key   : hidden (use -P to show)\n");
		}
	}
	if (xpub) {
		rnsc_identity_public_bytes(&id, key);
		cli_hex(hex, key, RNSC_KEYSIZE);
		printf("%s\n", hex);
	}
	if (xprv && rnsc_identity_private_bytes(&id, key) == 0) {
		cli_hex(hex, key, RNSC_KEYSIZE);
		printf("%s\n", hex);
	}
	rnsc_memzero(key, sizeof(key));
	if (aspects) {
		uint8_t dh[RNSC_TRUNCATED_HASHLEN];
		rc = rnsc_destination_hash_from_name(env.ctx, dh, id.hash, aspects);
		if (rc || !strchr(aspects, '.')) {
			fprintf(stderr, "rnsc id: '%s' is not app_name.aspect[.aspect...]\n", aspects);
			ret = CLI_USAGE;
		} else {
			cli_hex(hex, dh, sizeof(dh));
			printf("The %s destination for this identity is <%s>\n", aspects, hex);
		}
	}
	rnsc_identity_free(&id);
out:
	cli_env_close(&env);
	return ret;
}
