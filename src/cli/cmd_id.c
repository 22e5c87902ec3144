/* SPDX-License-Identifier: MIT */
/* rnsc id: the reference's rnid (RNS/Utilities/rnid.py) with its options, output text,
 * exit codes and file formats: identity files (64 private bytes; .pub: 64 public bytes),
 * import/export in hex, base32 and base64, destination hashes, signatures and encryption
 * (cmd_id_crypt.c), announces and identity requests through a node (attached to the
 * running shared instance when there is one, as rnid's Reticulum instance is). Options
 * are parsed the way argparse does it: list options (-s -V -e -d) take every following
 * argument that is not an option, -a/-S/-E take one optional value. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cmd_id.h"
#include "config.h"
#include "destination.h"
#include "identity.h"
#include "node.h"
#include "store.h"
#include "transport.h"

#define DEFAULT_ASPECTS "rns.id"
#define DEFAULT_REQUEST_TIMEOUT_S 15.0 /* Transport.PATH_REQUEST_TIMEOUT */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rnsc id [-h] [--config path] [-i rid] [-g path] [-m rid] [-M rid] [-x]\n"
		"               [-X] [-v] [-q] [-a [aspects]] [-H aspects] [-d [file ...]]\n"
		"               [-e [file ...]] [-V [path ...]] [-s [path ...]] [-S [text]]\n"
		"               [-E [path]] [--meta-spec [path]] [--raw] [-w path] [-r path]\n"
		"               [-f] [-R] [-N] [-t seconds] [-p] [-P]\n"
		"               [-B] [-b] [-U] [-F] [--meta] [--version]\n\n"
		"Reticulum Identity & Encryption Utility (the reference's rnid: same options, output,\n"
		"exit codes and files: .rsg signatures, .rsm signed messages, .rfe encrypted files,\n"
		"identity files of 64 private bytes and .pub files of 64 public bytes).\n\n"
		"options:\n"
		"  -h, --help            show this help message and exit\n"
		"  --config path         path to alternative Reticulum config directory\n"
		"  -i rid, --identity rid\n"
		"                        hexadecimal Reticulum identity or destination hash, or\n"
		"                        path to Identity file\n"
		"  -g path, --generate path\n"
		"                        generate a new Identity and save to path\n"
		"  -m rid, --import-pub rid\n"
		"                        import public Reticulum identity in hex, base32 or\n"
		"                        base64 format, or from file\n"
		"  -M rid, --import-prv rid\n"
		"                        import Reticulum identity in hex, base32 or base64\n"
		"                        format, or from file\n"
		"  -x, --export-pub      export public identity to hex, base32 or base64 format\n"
		"  -X, --export-prv      export private identity to hex, base32 or base64\n"
		"                        format, or to file\n"
		"  -v, --verbose         increase verbosity\n"
		"  -q, --quiet           decrease verbosity\n"
		"  -a [aspects], --announce [aspects]\n"
		"                        announce a destination based on this Identity\n"
		"  -H aspects, --hash aspects\n"
		"                        show destination hashes for other aspects for this\n"
		"                        Identity\n"
		"  -d [file ...], --decrypt [file ...]\n"
		"                        decrypt file\n"
		"  -e [file ...], --encrypt [file ...]\n"
		"                        encrypt file\n"
		"  -V [path ...], --validate [path ...]\n"
		"                        validate signature\n"
		"  -s [path ...], --sign [path ...]\n"
		"                        sign file\n"
		"  -S [text], --sign-message [text]\n"
		"                        create embedded signed message (no text and no -r: the\n"
		"                        message is written in $EDITOR)\n"
		"  -E [path], --embed-meta [path]\n"
		"                        embed metadata structure from file\n"
		"  --meta-spec [path]    validate metadata for embedding with spec from file\n"
		"  --raw                 sign raw input data instead of hashing first\n"
		"  -w path, --write path\n"
		"                        output file path\n"
		"  -r path, --read path  input file path for operations with optional file\n"
		"                        input\n"
		"  -f, --force           write output even if it overwrites existing files\n"
		"  -I, --stdin, -O, --stdout\n"
		"                        accepted as rnid accepts them (rnid reads and writes\n"
		"                        files either way; -O silences log output)\n"
		"  -R, --request         request unknown Identities from the network\n"
		"  -N, --no-cache        never used cached or network-sourced information\n"
		"  -t seconds            identity request timeout before giving up (default 15)\n"
		"  -p, --print-identity  print identity info and exit\n"
		"  -P, --print-private   allow displaying private keys\n"
		"  -B, --base32          Use base32-encoded input and output\n"
		"  -b, --base64          Use base64-encoded input and output\n"
		"  -U, --base256         Use base256-encoded input and output\n"
		"  -F, --hex             Use hex-encoded input and output\n"
		"  --meta                Display RSM metadata if available\n"
		"  --crypto LIST         crypto backend order (rnsc)\n"
		"  --version             show program's version number and exit\n\n"
		"-E reads a ConfigObj file; with a spec (path.spec, or --meta-spec) its checks\n"
		"string, integer, float, boolean, pass, option and the list checks convert and\n"
		"default the values as rnid's Validator does (one argument per check, as rnid's\n"
		"own spec reader allows); other checks are refused.\n\n"
		"Exit status (rnid's): 0 ok, 2 no identity, 3/4 no public/private key, 6 no such\n"
		"file, 7 not an encrypted file, 8 invalid identity, 9 invalid aspects, 10 invalid\n"
		"signature, 11 output exists, 12 decryption failed, 250 invalid arguments, 251\n"
		"sequence error, 252 read error, 253 write error, 254 other errors.\n");
}

__attribute__((format(printf, 1, 2))) static void usage_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr,
		"usage: rnsc id [-h] [--config path] [-i rid] [-g path] [-m rid] [-M rid] [-x] ...\n"
		"rnsc id: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

/* ---- argument parsing ------------------------------------------------------------------ */

enum kind { K_FLAG, K_ARG, K_OPT, K_LIST };

typedef struct optdef {
	char s;
	const char *l;
	enum kind k;
	int id;
} optdef;

enum {
	O_CONFIG = 1,
	O_IDENTITY,
	O_GENERATE,
	O_IMPORT_PUB,
	O_IMPORT_PRV,
	O_EXPORT_PUB,
	O_EXPORT_PRV,
	O_VERBOSE,
	O_QUIET,
	O_ANNOUNCE,
	O_HASH,
	O_DECRYPT,
	O_ENCRYPT,
	O_VALIDATE,
	O_SIGN,
	O_SIGN_MESSAGE,
	O_EMBED_META,
	O_META_SPEC,
	O_RAW,
	O_WRITE,
	O_READ,
	O_FORCE,
	O_STDIN,
	O_STDOUT,
	O_REQUEST,
	O_NO_CACHE,
	O_TIMEOUT,
	O_PRINT,
	O_PRIVATE,
	O_B32,
	O_B64,
	O_B256,
	O_HEX,
	O_META,
	O_VERSION,
	O_HELP,
	O_CRYPTO,
};

static const optdef OPTS[] = {
	{0, "config", K_ARG, O_CONFIG},
	{'i', "identity", K_ARG, O_IDENTITY},
	{'g', "generate", K_ARG, O_GENERATE},
	{'m', "import-pub", K_ARG, O_IMPORT_PUB},
	{'M', "import-prv", K_ARG, O_IMPORT_PRV},
	{'x', "export-pub", K_FLAG, O_EXPORT_PUB},
	{'X', "export-prv", K_FLAG, O_EXPORT_PRV},
	{'v', "verbose", K_FLAG, O_VERBOSE},
	{'q', "quiet", K_FLAG, O_QUIET},
	{'a', "announce", K_OPT, O_ANNOUNCE},
	{'H', "hash", K_ARG, O_HASH},
	{'d', "decrypt", K_LIST, O_DECRYPT},
	{'e', "encrypt", K_LIST, O_ENCRYPT},
	{'V', "validate", K_LIST, O_VALIDATE},
	{'s', "sign", K_LIST, O_SIGN},
	{'S', "sign-message", K_OPT, O_SIGN_MESSAGE},
	{'E', "embed-meta", K_OPT, O_EMBED_META},
	{0, "meta-spec", K_OPT, O_META_SPEC},
	{0, "raw", K_FLAG, O_RAW},
	{'w', "write", K_ARG, O_WRITE},
	{'r', "read", K_ARG, O_READ},
	{'f', "force", K_FLAG, O_FORCE},
	{'I', "stdin", K_FLAG, O_STDIN},
	{'O', "stdout", K_FLAG, O_STDOUT},
	{'R', "request", K_FLAG, O_REQUEST},
	{'N', "no-cache", K_FLAG, O_NO_CACHE},
	{'t', NULL, K_ARG, O_TIMEOUT},
	{'p', "print-identity", K_FLAG, O_PRINT},
	{'P', "print-private", K_FLAG, O_PRIVATE},
	{'B', "base32", K_FLAG, O_B32},
	{'b', "base64", K_FLAG, O_B64},
	{'U', "base256", K_FLAG, O_B256},
	{'F', "hex", K_FLAG, O_HEX},
	{0, "meta", K_FLAG, O_META},
	{0, "version", K_FLAG, O_VERSION},
	{'h', "help", K_FLAG, O_HELP},
	{0, "crypto", K_ARG, O_CRYPTO},
};
#define N_OPTS (sizeof(OPTS) / sizeof(OPTS[0]))

static int looks_like_option(const char *s)
{
	return s[0] == '-' && s[1] != 0;
}

static int apply(id_args *a, const optdef *o, const char *val, const char **crypto)
{
	char *end;
	switch (o->id) {
	case O_CONFIG:
		a->config = val;
		break;
	case O_IDENTITY:
		a->identity = val;
		break;
	case O_GENERATE:
		a->generate = val;
		break;
	case O_IMPORT_PUB:
		a->import_pub = val;
		break;
	case O_IMPORT_PRV:
		a->import_prv = val;
		break;
	case O_EXPORT_PUB:
		a->export_pub = 1;
		break;
	case O_EXPORT_PRV:
		a->export_prv = 1;
		break;
	case O_VERBOSE:
		a->verbose++;
		break;
	case O_QUIET:
		a->quiet++;
		break;
	case O_ANNOUNCE:
		a->announce = val ? val : DEFAULT_ASPECTS;
		break;
	case O_HASH:
		a->hash = val;
		break;
	case O_SIGN_MESSAGE:
		a->sign_message_given = 1;
		a->sign_message = val;
		a->sign_message_empty = val == NULL;
		break;
	case O_EMBED_META:
		a->embed_meta_given = 1;
		a->embed_meta = val;
		break;
	case O_META_SPEC:
		a->meta_spec = val ? val : "";
		break;
	case O_RAW:
		a->raw = 1;
		break;
	case O_WRITE:
		a->write = val;
		break;
	case O_READ:
		a->read = val;
		break;
	case O_FORCE:
		a->force = 1;
		break;
	case O_STDIN:
		a->in_stdin = 1;
		break;
	case O_STDOUT:
		a->out_stdout = 1;
		break;
	case O_REQUEST:
		a->request = 1;
		break;
	case O_NO_CACHE:
		a->no_cache = 1;
		break;
	case O_TIMEOUT:
		a->timeout = strtod(val, &end);
		if (end == val || *end || !(a->timeout >= 0)) {
			usage_error("argument -t: invalid float value: '%s'", val);
			return RID_INVALID_ARGS;
		}
		break;
	case O_PRINT:
		a->print_identity = 1;
		break;
	case O_PRIVATE:
		a->print_private = 1;
		break;
	case O_B32:
		a->b32 = 1;
		break;
	case O_B64:
		a->b64 = 1;
		break;
	case O_B256:
		a->b256 = 1;
		break;
	case O_HEX:
		a->hexf = 1;
		break;
	case O_META:
		a->meta = 1;
		break;
	case O_CRYPTO:
		*crypto = val;
		break;
	default:
		break;
	}
	return 0;
}

static id_list *list_of(id_args *a, int id)
{
	return id == O_DECRYPT    ? &a->decrypt
	       : id == O_ENCRYPT  ? &a->encrypt
	       : id == O_VALIDATE ? &a->validate
				  : &a->sign;
}

/* Returns 0, or an exit code (help/version: RID_OK with *stop set). */
static int parse(int argc, char **argv, id_args *a, const char **crypto, int *stop)
{
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (!looks_like_option(s)) {
			usage_error("unrecognized arguments: %s", s);
			return RID_INVALID_ARGS;
		}
		const optdef *o = NULL;
		const char *attached = NULL;
		const char *cluster = NULL;
		if (s[1] == '-') {
			const char *name = s + 2, *eq = strchr(name, '=');
			size_t nl = eq ? (size_t)(eq - name) : strlen(name);
			for (size_t k = 0; k < N_OPTS && !o; k++)
				if (OPTS[k].l && strlen(OPTS[k].l) == nl &&
				    strncmp(OPTS[k].l, name, nl) == 0)
					o = &OPTS[k];
			if (!o) {
				usage_error("unrecognized arguments: %s", s);
				return RID_INVALID_ARGS;
			}
			attached = eq ? eq + 1 : NULL;
		} else {
			cluster = s + 1;
		}
		do {
			if (cluster) {
				o = NULL;
				for (size_t k = 0; k < N_OPTS && !o; k++)
					if (OPTS[k].s == *cluster)
						o = &OPTS[k];
				if (!o) {
					usage_error("unrecognized arguments: %s", s);
					return RID_INVALID_ARGS;
				}
				cluster++;
				if (o->k != K_FLAG && *cluster) {
					attached = cluster;
					cluster = NULL;
				} else if (!*cluster) {
					cluster = NULL;
				}
			}
			if (o->id == O_HELP) {
				usage(stdout);
				*stop = 1;
				return RID_OK;
			}
			if (o->id == O_VERSION) {
				printf("rnsc id %s\n", PACKAGE_VERSION);
				*stop = 1;
				return RID_OK;
			}
			const char *val = attached;
			switch (o->k) {
			case K_FLAG:
				if (attached) {
					usage_error("unrecognized arguments: %s", s);
					return RID_INVALID_ARGS;
				}
				break;
			case K_ARG:
				if (!val) {
					if (i + 1 >= argc || looks_like_option(argv[i + 1])) {
						usage_error("argument %s: expected one argument",
							    s);
						return RID_INVALID_ARGS;
					}
					val = argv[++i];
				}
				break;
			case K_OPT:
				if (!val && i + 1 < argc && !looks_like_option(argv[i + 1]))
					val = argv[++i];
				break;
			case K_LIST: {
				id_list *l = list_of(a, o->id);
				l->given = 1;
				l->n = 0;
				if (val)
					l->v[l->n++] = val;
				while (i + 1 < argc && !looks_like_option(argv[i + 1])) {
					if (l->n >= ID_MAX_LIST) {
						usage_error("at most 64 files per option (%s)", s);
						return RID_INVALID_ARGS;
					}
					l->v[l->n++] = argv[++i];
				}
				break;
			}
			}
			int rc = apply(a, o, val, crypto);
			if (rc)
				return rc;
			attached = NULL;
		} while (cluster);
	}
	return 0;
}

/* ---- identity resolution ---------------------------------------------------------------- */

typedef struct id_net {
	cli_env *env;
	rnsc_node *node;
} id_net;

static int net_open(const id_args *a, id_net *net)
{
	if (net->node)
		return 0;
	rnsc_node_options no = {.config_dir = a->config,
				.handle_signals = 1,
				.apply_loglevel = 1,
				.verbosity = a->verbose - a->quiet};
	rnsc_config_error err;
	int rc = rnsc_node_new(net->env->ctx, net->env->host, &no, &net->node, &err);
	if (rc) {
		printf("Could not start Reticulum: %s\n", err.msg[0] ? err.msg : rnsc_strerror(rc));
		return rc;
	}
	if (a->out_stdout)
		rnsc_ctx_set_log_level(net->env->ctx, -1);
	/* Let the interfaces (or the shared instance connection) come up. */
	uint64_t until = rnsc_monotonic_ns() + 3000 * RNSC_NS_PER_MS;
	while (rnsc_monotonic_ns() < until && !rnsc_node_stopping(net->node)) {
		rnsc_iface_host *ih = rnsc_node_ifaces(net->node);
		size_t cnt = rnsc_iface_host_count(ih), up = 0;
		for (size_t i = 0; i < cnt; i++) {
			rnsc_iface *f = rnsc_iface_host_at(ih, i);
			up += rnsc_iface_parent(f) || rnsc_iface_online(f);
		}
		if (up == cnt)
			break;
		rnsc_node_run_once(net->node, 50);
	}
	return 0;
}

/* Identity.recall(hash) or recall(hash, from_identity_hash=True). */
static int recall(rnsc_ctx *ctx, rnsc_transport *t, const uint8_t h[RNSC_TRUNCATED_HASHLEN],
		  rnsc_identity *out)
{
	if (rnsc_transport_recall(t, h, out, NULL, NULL) == 0)
		return 0;
	size_t cur = 0;
	rnsc_transport_known k;
	while (rnsc_transport_known_next(t, &cur, &k) == 1) {
		rnsc_identity id;
		if (rnsc_identity_from_public(ctx, &id, k.public_key, RNSC_KEYSIZE) != 0)
			continue;
		if (memcmp(id.hash, h, RNSC_TRUNCATED_HASHLEN) == 0) {
			*out = id;
			return 0;
		}
	}
	return -1;
}

static int is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The import of -m/-M: a file of exactly 64 bytes, else hex, base32, base64. */
static int import_bytes(const char *arg, uint8_t out[RNSC_KEYSIZE])
{
	if (is_file(arg)) {
		FILE *f = fopen(arg, "rb");
		if (f) {
			uint8_t buf[RNSC_KEYSIZE + 1];
			size_t n = fread(buf, 1, sizeof(buf), f);
			fclose(f);
			if (n == RNSC_KEYSIZE) {
				memcpy(out, buf, RNSC_KEYSIZE);
				printf("Reticulum Identity imported from %s\n", arg);
				return 0;
			}
		}
	}
	if (strlen(arg) == 2 * RNSC_KEYSIZE && cli_unhex(out, RNSC_KEYSIZE, arg) == RNSC_KEYSIZE) {
		printf("Reticulum Identity imported from hex input\n");
		return 0;
	}
	uint8_t buf[512];
	if (strlen(arg) < 680 && id_b32_decode(buf, sizeof(buf), arg) == RNSC_KEYSIZE) {
		memcpy(out, buf, RNSC_KEYSIZE);
		printf("Reticulum Identity imported from base32 input\n");
		return 0;
	}
	if (strlen(arg) < 680 && id_b64_decode(buf, sizeof(buf), arg) == RNSC_KEYSIZE) {
		memcpy(out, buf, RNSC_KEYSIZE);
		printf("Reticulum Identity imported from base64 input\n");
		return 0;
	}
	return -1;
}

static void spin_clear(const char *msg)
{
	printf("\r%*s  \r", (int)strlen(msg), "");
	fflush(stdout);
}

/* get_operating_identity. Returns RID_CONTINUE with w->have set (or not), or an exit code. */
static int operating_identity(const id_args *a, id_net *net, int allow_none, id_work *w)
{
	rnsc_ctx *ctx = net->env->ctx;
	char ids[40];
	memset(w, 0, sizeof(*w));
	if (a->generate) {
		if (!a->force && is_file(a->generate)) {
			printf("Identity file %s already exists. Not overwriting.\n", a->generate);
			return RID_FILE_EXISTS;
		}
		int rc = rnsc_identity_generate(ctx, &w->id);
		if (rc == 0)
			rc = rnsc_identity_save_file(&w->id, a->generate);
		if (rc) {
			printf("An error ocurred while saving the generated Identity: %s\n",
			       rnsc_strerror(rc));
			return RID_WRITE_ERROR;
		}
		w->have = 1;
		id_pretty(ids, w->id.hash);
		printf("New identity %s written to %s\n", ids, a->generate);
		return RID_CONTINUE;
	}
	if (a->identity) {
		const char *s = a->identity;
		if (is_file(s)) {
			int rc = rnsc_identity_load_file(ctx, &w->id, s);
			if (rc) {
				printf("Loaded Identity None from %s\n", s);
				printf("Could not load Identity from specified file: %s\n",
				       rnsc_strerror(rc));
				return RID_INVALID_IDENTITY;
			}
			w->have = 1;
			id_pretty(ids, w->id.hash);
			printf("Loaded Identity %s from %s\n", ids, s);
			return RID_CONTINUE;
		}
		if (a->no_cache) {
			if (allow_none)
				return RID_CONTINUE;
			printf("Could not resolve identity\n");
			return RID_NO_IDENTITY;
		}
		if (strlen(s) != 2 * RNSC_TRUNCATED_HASHLEN)
			return RID_CONTINUE;
		if (net_open(a, net))
			return RID_UNKNOWN_ERROR;
		uint8_t h[RNSC_TRUNCATED_HASHLEN];
		if (cli_unhex(h, sizeof(h), s) != RNSC_TRUNCATED_HASHLEN) {
			size_t pos = 0;
			while (s[pos] && strchr("0123456789abcdefABCDEF", s[pos]))
				pos++;
			printf("Invalid hexadecimal hash provided: non-hexadecimal number found in "
			       "fromhex() arg at position %zu\n",
			       pos);
			return RID_INVALID_IDENTITY;
		}
		char hs[40];
		id_pretty(hs, h);
		rnsc_transport *t = rnsc_node_transport(net->node);
		if (recall(ctx, t, h, &w->id) == 0) {
			w->have = 1;
			id_pretty(ids, w->id.hash);
			if (strcmp(ids, hs) == 0)
				printf("Recalled Identity %s\n", ids);
			else
				printf("Recalled Identity %s for destination %s\n", ids, hs);
			return RID_CONTINUE;
		}
		if (!a->request) {
			if (allow_none)
				return RID_CONTINUE;
			printf("Could not recall Identity for %s.\n", hs);
			printf("You can query the network for unknown Identities with the -R option.\n");
			return RID_NO_IDENTITY;
		}
		/* As rnid: ask for the hash as a destination and as an identity's rns.id. */
		uint8_t idd[RNSC_TRUNCATED_HASHLEN];
		if (rnsc_destination_hash_from_name(ctx, idd, h, DEFAULT_ASPECTS) == 0)
			(void)rnsc_transport_request_path(t, idd, 0, 0, rnsc_node_now_ms());
		(void)rnsc_transport_request_path(t, h, 0, 0, rnsc_node_now_ms());
		rnsc_node_flush(net->node);
		char msg[80];
		snprintf(msg, sizeof(msg), "Requesting unknown Identity for %s", hs);
		printf("%s   ", msg);
		fflush(stdout);
		double tmo = a->timeout > 0 ? a->timeout : DEFAULT_REQUEST_TIMEOUT_S;
		uint64_t until = rnsc_monotonic_ns() + (uint64_t)(tmo * 1e9);
		int got = 0;
		while (!got && rnsc_monotonic_ns() < until && !rnsc_node_stopping(net->node)) {
			rnsc_node_run_once(net->node, 100);
			got = recall(ctx, t, h, &w->id) == 0;
		}
		spin_clear(msg);
		if (!got) {
			printf("Identity request timed out\n");
			return allow_none ? RID_CONTINUE : RID_NO_IDENTITY;
		}
		w->have = 1;
		id_pretty(ids, w->id.hash);
		printf("Received Identity %s for destination %s from the network\n", ids, hs);
		return RID_CONTINUE;
	}
	if (a->import_pub || a->import_prv) {
		uint8_t key[RNSC_KEYSIZE];
		int prv = a->import_pub == NULL;
		if (import_bytes(prv ? a->import_prv : a->import_pub, key)) {
			printf("Could not decode specified data to a valid %s Reticulum Identity\n",
			       prv ? "private" : "public");
			return RID_INVALID_IDENTITY;
		}
		int rc = prv ? rnsc_identity_from_private(ctx, &w->id, key, RNSC_KEYSIZE)
			     : rnsc_identity_from_public(ctx, &w->id, key, RNSC_KEYSIZE);
		rnsc_memzero(key, sizeof(key));
		if (rc) {
			printf("Could not create Reticulum identity from specified data: %s\n",
			       rnsc_strerror(rc));
			return RID_INVALID_IDENTITY;
		}
		w->have = 1;
	}
	return RID_CONTINUE;
}

/* ---- terminal output ------------------------------------------------------------------ */

static void print_key(const char *label, enum id_fmt fmt, const uint8_t *k)
{
	char *t = id_enc(fmt == FMT_BASE32 || fmt == FMT_BASE64 ? fmt : FMT_HEX, k, RNSC_KEYSIZE);
	if (t)
		printf("%s%s\n", label, t);
	free(t);
}

static void print_identity(const id_args *a, const rnsc_identity *id)
{
	char ids[40];
	uint8_t k[RNSC_KEYSIZE];
	id_pretty(ids, id->hash);
	printf("Identity Hash : %s\n", ids);
	rnsc_identity_public_bytes(id, k);
	print_key("Public Key    : ", a->fmt, k);
	if (id->has_private) {
		if (a->print_private && rnsc_identity_private_bytes(id, k) == 0)
			print_key("Private Key   : ", a->fmt, k);
		else
			printf("Private Key   : Hidden\n");
	}
	rnsc_memzero(k, sizeof(k));
}

static int print_hash(const id_args *a, rnsc_ctx *ctx, const rnsc_identity *id)
{
	uint8_t ih[RNSC_TRUNCATED_HASHLEN], dh[RNSC_TRUNCATED_HASHLEN];
	if (id) {
		memcpy(ih, id->hash, sizeof(ih));
	} else {
		const char *s = a->identity;
		if (!s) {
			printf("Invalid identity\n");
			return RID_INVALID_IDENTITY;
		}
		if (strlen(s) != 2 * RNSC_TRUNCATED_HASHLEN) {
			printf("Invalid identity hash length\n");
			return RID_INVALID_IDENTITY;
		}
		if (cli_unhex(ih, sizeof(ih), s) != RNSC_TRUNCATED_HASHLEN) {
			size_t pos = 0;
			while (s[pos] && strchr("0123456789abcdefABCDEF", s[pos]))
				pos++;
			printf("Invalid identity: non-hexadecimal number found in fromhex() arg at "
			       "position %zu\n",
			       pos);
			return RID_INVALID_IDENTITY;
		}
	}
	int rc = rnsc_destination_hash_from_name(ctx, dh, ih, a->hash);
	if (rc) {
		printf("An error ocurred while attempting to get hash information: %s\n",
		       rnsc_strerror(rc));
		return RID_UNKNOWN_ERROR;
	}
	char hs[40], is[40];
	id_pretty(hs, dh);
	printf("The %s destination for this Identity is %s\n", a->hash, hs);
	if (id) {
		cli_hex(is, ih, sizeof(ih));
		printf("The full destination specifier is <%s.%s:%s\n", a->hash, is, hs + 1);
	}
	return RID_CONTINUE;
}

static void export_key(const id_args *a, const rnsc_identity *id, int prv)
{
	uint8_t k[RNSC_KEYSIZE];
	if (prv)
		(void)rnsc_identity_private_bytes(id, k);
	else
		rnsc_identity_public_bytes(id, k);
	print_key(prv ? "Private Identity Keys : " : "Public Identity Keys  : ", a->fmt, k);
	rnsc_memzero(k, sizeof(k));
}

static int write_identity(const id_args *a, const rnsc_identity *id)
{
	char wp[4200];
	snprintf(wp, sizeof(wp), "%s", a->write);
	int rc;
	if (id->has_private && a->export_prv) {
		if (is_file(wp) && !a->force) {
			printf("File %s already exists, not overwriting\n", wp);
			return RID_FILE_EXISTS;
		}
		if ((rc = rnsc_identity_save_file(id, wp))) {
			printf("Error while writing imported identity to file: %s\n",
			       rnsc_strerror(rc));
			return RID_WRITE_ERROR;
		}
		printf("Wrote private identity to %s\n", wp);
		return RID_CONTINUE;
	}
	size_t l = strlen(wp);
	if (l < 4 || strcasecmp(wp + l - 4, ".pub") != 0)
		strncat(wp, ".pub", sizeof(wp) - l - 1);
	if (is_file(wp) && !a->force) {
		printf("File %s already exists, not overwriting\n", wp);
		return RID_FILE_EXISTS;
	}
	uint8_t k[RNSC_KEYSIZE];
	rnsc_identity_public_bytes(id, k);
	if ((rc = rnsc_store_write_atomic(wp, k, sizeof(k), 0644))) {
		printf("Error while writing imported identity to file: %s\n", rnsc_strerror(rc));
		return RID_WRITE_ERROR;
	}
	printf("Wrote public identity to %s\n", wp);
	return RID_CONTINUE;
}

static int announce(const id_args *a, id_net *net, const rnsc_identity *id)
{
	const char *dot = strchr(a->announce, '.');
	if (!dot || dot == a->announce) {
		printf("Invalid destination aspects specified\n");
		return RID_INVALID_ASPECTS;
	}
	if (!id->has_private) {
		printf("Cannot announce this destination, since the private key is not held\n");
		return RID_NO_PRVKEY;
	}
	if (net_open(a, net))
		return RID_UNKNOWN_ERROR;
	char app[128], buf[512];
	const char *asp[16];
	size_t na = 0;
	snprintf(buf, sizeof(buf), "%s", dot + 1);
	snprintf(app, sizeof(app), "%.*s", (int)(dot - a->announce), a->announce);
	for (char *save = NULL, *p = strtok_r(buf, ".", &save); p && na < 16;
	     p = strtok_r(NULL, ".", &save))
		asp[na++] = p;
	rnsc_transport *t = rnsc_node_transport(net->node);
	uint8_t dh[RNSC_TRUNCATED_HASHLEN];
	int rc = rnsc_transport_dest_add(t, RNSC_DEST_SINGLE, id, app, asp, na, 0, dh);
	char hs[40], ids[40];
	if (rc == 0) {
		id_pretty(hs, dh);
		id_pretty(ids, id->hash);
		printf("Announcing %s destination %s for identity %s\n", a->announce, hs, ids);
		fflush(stdout);
		rc = rnsc_transport_announce(t, dh, NULL, 0, rnsc_node_now_ms());
	}
	if (rc) {
		printf("An error ocurred while attempting to send the announce: %s\n",
		       rnsc_strerror(rc));
		return RID_UNKNOWN_ERROR;
	}
	rnsc_node_flush(net->node);
	uint64_t until = rnsc_monotonic_ns() + 250 * RNSC_NS_PER_MS; /* rnid sleeps 0.25 s */
	while (rnsc_monotonic_ns() < until)
		rnsc_node_run_once(net->node, 50);
	rnsc_node_flush(net->node);
	return RID_CONTINUE;
}

int cmd_id(int argc, char **argv)
{
	id_args a;
	memset(&a, 0, sizeof(a));
	const char *crypto = NULL;
	int stop = 0;
	int rc = parse(argc, argv, &a, &crypto, &stop);
	if (rc || stop)
		return rc;
	/* validate_args */
	int ops = (a.encrypt.n > 0) + (a.decrypt.n > 0) + (a.validate.n > 0) + (a.sign.n > 0) +
		  a.sign_message_given;
	if (ops > 1) {
		printf("This utility currently only supports one of the encrypt, decrypt, sign or "
		       "verify operations per invocation\n");
		return 1;
	}
	if ((a.import_pub != NULL) + (a.import_prv != NULL) + (a.identity != NULL) +
		    (a.generate != NULL) >
	    1) {
		printf("The -i, -g, -m and -M args are mutually exclusive\n");
		return 1;
	}
	if (a.b64 + a.b32 + a.b256 + a.hexf > 1) {
		printf("The -b, -B, --hex and --base256 args are mutually exclusive\n");
		return 1;
	}
	a.fmt = a.b32    ? FMT_BASE32
		: a.b64  ? FMT_BASE64
		: a.b256 ? FMT_BASE256
		: a.hexf ? FMT_HEX
			 : FMT_BIN;
	cli_env env;
	if ((rc = cli_env_open(&env, crypto, 0)))
		return rc;
	id_net net = {.env = &env};
	int needs = a.sign.n || a.sign_message_given || a.encrypt.n || a.decrypt.n || a.announce ||
		    a.write || a.print_identity || a.export_pub || a.export_prv;
	id_work w;
	int ret = operating_identity(&a, &net, !needs, &w);
	const rnsc_identity *id = w.have ? &w.id : NULL;
	if (ret != RID_CONTINUE)
		goto out;
	if (!id && needs) {
		printf("Could not get working identity\n");
		ret = RID_NO_IDENTITY;
		goto out;
	}
	int op = a.generate != NULL;
	if (a.print_identity) {
		print_identity(&a, id);
		op = 1;
	}
	if (a.export_pub) {
		export_key(&a, id, 0);
		op = 1;
	}
	if (a.export_prv) {
		if (!id->has_private) {
			printf("Identity doesn't hold a private key, cannot export\n");
			ret = RID_NO_PRVKEY;
			goto out;
		}
		export_key(&a, id, 1);
		op = 1;
	}
	ret = RID_CONTINUE;
	if (a.hash && (ret = print_hash(&a, env.ctx, id)) != RID_CONTINUE)
		goto out;
	if (a.announce && (ret = announce(&a, &net, id)) != RID_CONTINUE)
		goto out;
	if (a.validate.n) {
		ret = id_op_validate(&a, env.ctx, id);
		goto out;
	}
	if (a.sign.n) {
		ret = id_op_sign(&a, env.ctx, id);
		goto out;
	}
	if (a.sign_message_given) {
		ret = id_op_sign_message(&a, env.ctx, id);
		goto out;
	}
	if (a.encrypt.n) {
		ret = id_op_encrypt(&a, env.ctx, id);
		goto out;
	}
	if (a.decrypt.n) {
		ret = id_op_decrypt(&a, env.ctx, id);
		goto out;
	}
	if (a.write && (ret = write_identity(&a, id)) != RID_CONTINUE)
		goto out;
	op |= a.hash || a.announce || a.write;
	if (!op)
		usage(stdout);
	ret = RID_OK;
out:
	if (w.have)
		rnsc_identity_free(&w.id);
	if (net.node)
		rnsc_node_del(net.node);
	cli_env_close(&env);
	return ret == RID_CONTINUE ? RID_OK : ret;
}
