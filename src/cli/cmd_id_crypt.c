/* SPDX-License-Identifier: MIT */
/* rnsc id: rnid's signatures (.rsg detached, .rsm with the message embedded, and the
 * legacy bare 64-byte signature), file encryption (.rfe: a sequence of identity tokens,
 * one per 16 MiB of plaintext, exactly the chunking rnid reads back) and the text
 * encodings. The rsg envelope is msgpack {hashtype, hash, meta{signer, pubkey, ...},
 * [message]} signed with Ed25519, so rnid and rnsc id produce identical bytes for the
 * same key and input. Outputs are written to a temporary file and renamed, so a failed
 * run never leaves a half-written signature or plaintext behind. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_id.h"
#include "crypto.h"
#include "msgpack.h"
#include "crypto_abi.h"
#include "store.h"

#define ENC_CHUNK ((size_t)1024 * 1024 * 16) /* CHUNK_BLOCKS * AES block size */
#define DEC_CHUNK (ENC_CHUNK + 2 * RNSC_TOKEN_OVERHEAD)
#define RSG_ROW 64
#define MAX_SIG_FILE ((size_t)64 << 20)

/* ---- encodings ------------------------------------------------------------------------- */

static const char B32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
static const char B64U[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* RNS.b256: 256 code points, one per byte value. */
static const uint32_t B256[256] = {
	0x61,    0x62,    0x63,    0x64,    0x65,    0x66,    0x67,    0x68,    0x69,    0x6a,
	0x6b,    0x6c,    0x6d,    0x6e,    0x6f,    0x70,    0x71,    0x72,    0x73,    0x74,
	0x75,    0x76,    0x78,    0x79,    0x7a,    0xe6,    0xf8,    0x30,    0x31,    0x32,
	0x33,    0x34,    0x41,    0x42,    0x43,    0x44,    0x45,    0x46,    0x47,    0x48,
	0x49,    0x4a,    0x4b,    0x4c,    0x4d,    0x4e,    0x4f,    0x50,    0x51,    0x52,
	0x53,    0x54,    0x55,    0x57,    0x58,    0x59,    0x5a,    0xc6,    0xd8,    0x35,
	0x36,    0x37,    0x38,    0x39,    0x3b1,   0x3b2,   0x3b3,   0x3b4,   0x3b5,   0x3b6,
	0x3b7,   0x3b8,   0x3b9,   0x3ba,   0x3bb,   0x3bc,   0x3bd,   0x3be,   0x3c0,   0x3c1,
	0x3c3,   0x3c4,   0x3c6,   0x3c7,   0x3c8,   0x3c9,   0x393,   0x394,   0x398,   0x39b,
	0x39e,   0x3a0,   0x3a3,   0x3a6,   0x3a8,   0x3a9,   0x411,   0x414,   0x416,   0x417,
	0x418,   0x41b,   0x41f,   0x426,   0x427,   0x428,   0x429,   0x42a,   0x42b,   0x42d,
	0x42e,   0x42f,   0x431,   0x434,   0x436,   0x437,   0x438,   0x43b,   0x43f,   0x446,
	0x447,   0x448,   0x449,   0x44a,   0x44b,   0x44d,   0x44e,   0x44f,   0x531,   0x532,
	0x533,   0x534,   0x535,   0x536,   0x537,   0x538,   0x539,   0x53a,   0x53b,   0x53d,
	0x53e,   0x53f,   0x540,   0x541,   0x542,   0x543,   0x544,   0x545,   0x546,   0x547,
	0x548,   0x549,   0x54a,   0x54b,   0x54e,   0x550,   0x551,   0x552,   0x554,   0x556,
	0x16a0,  0x16a2,  0x16a6,  0x16b1,  0x16b9,  0x16ba,  0x16be,  0x16c8,  0x16c7,  0x16c9,
	0x16ca,  0x16cf,  0x16d2,  0x16d6,  0x16d7,  0x16df,  0xff72,  0xff73,  0xff75,  0xff76,
	0xff77,  0xff79,  0xff7b,  0xff7c,  0xff7d,  0xff7e,  0xff80,  0xff81,  0xff83,  0xff84,
	0xff85,  0xff87,  0xff88,  0xff8b,  0xff8c,  0xff8d,  0xff8e,  0xff8f,  0xff90,  0xff91,
	0xff92,  0xff93,  0xff94,  0xff97,  0xff98,  0xff99,  0xff9a,  0xff9c,  0x10450, 0x10451,
	0x10452, 0x10454, 0x10455, 0x10457, 0x10459, 0x10473, 0x10476, 0x10478, 0x10479, 0x1047a,
	0x1047b, 0x1047d, 0x1047e, 0x1047f, 0x1c51,  0x1c55,  0x1c58,  0x1c59,  0x1c5a,  0x1c5d,
	0x1c5f,  0x1c63,  0x1c66,  0x1c68,  0x1c6c,  0x1c6d,  0x1c70,  0x1c73,  0x1c76,  0x1c77,
	0x10333, 0x10338, 0x1033e, 0x10400, 0x10401, 0x10402, 0x10406, 0x10407, 0x10408, 0x10409,
	0x1040a, 0x1040b, 0x1040c, 0x1040d, 0x1040e, 0x1040f};

static size_t utf8_put(char *o, uint32_t c)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | (c >> 6));
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | (c >> 12));
		o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (c >> 18));
	o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

char *id_enc(enum id_fmt fmt, const uint8_t *p, size_t len)
{
	char *o = malloc(len * 4 + 16);
	if (!o)
		return NULL;
	size_t n = 0;
	if (fmt == FMT_BASE32) {
		for (size_t i = 0; i < len; i += 5) {
			uint64_t v = 0;
			size_t k = len - i < 5 ? len - i : 5;
			for (size_t j = 0; j < 5; j++)
				v = (v << 8) | (j < k ? p[i + j] : 0);
			static const size_t chars[6] = {0, 2, 4, 5, 7, 8};
			for (size_t j = 0; j < 8; j++)
				o[n++] = j < chars[k] ? B32[(v >> (35 - 5 * j)) & 31] : '=';
		}
	} else if (fmt == FMT_BASE64) {
		for (size_t i = 0; i < len; i += 3) {
			size_t k = len - i < 3 ? len - i : 3;
			uint32_t v = (uint32_t)p[i] << 16 | (k > 1 ? (uint32_t)p[i + 1] << 8 : 0) |
				     (k > 2 ? p[i + 2] : 0);
			for (size_t j = 0; j < 4; j++)
				o[n++] = j <= k ? B64U[(v >> (18 - 6 * j)) & 63] : '=';
		}
	} else if (fmt == FMT_BASE256) {
		for (size_t i = 0; i < len; i++)
			n += utf8_put(o + n, B256[p[i]]);
	} else {
		cli_hex(o, p, len);
		n = 2 * len;
	}
	o[n] = 0;
	return o;
}

/* Python's b32decode (no casefold): whole 8-character groups, '=' only as final
 * padding of a valid length. */
long id_b32_decode(uint8_t *out, size_t cap, const char *s)
{
	size_t len = strlen(s), n = 0;
	if (len % 8)
		return -1;
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = 0;
		size_t data = 0;
		for (size_t j = 0; j < 8; j++) {
			char ch = s[i + j];
			const char *q = ch ? strchr(B32, ch) : NULL;
			if (ch == '=') {
				if (i + 8 != len)
					return -1;
				for (size_t k = j; k < 8; k++)
					if (s[i + k] != '=')
						return -1;
				break;
			}
			if (!q)
				return -1;
			v |= (uint64_t)(q - B32) << (35 - 5 * j);
			data++;
		}
		static const int bytes_for[9] = {0, -1, 1, -1, 2, 3, -1, 4, 5};
		int nb = bytes_for[data];
		if (nb < 0 || (data < 8 && i + 8 != len))
			return -1;
		for (int j = 0; j < nb; j++) {
			if (n >= cap)
				return -1;
			out[n++] = (uint8_t)(v >> (32 - 8 * j));
		}
	}
	return (long)n;
}

/* Python's urlsafe_b64decode: '-' '_' (and '+' '/') are data, other characters are
 * skipped, the data must end on a quad boundary once padded. */
long id_b64_decode(uint8_t *out, size_t cap, const char *s)
{
	uint32_t v = 0;
	size_t q = 0, n = 0, pad = 0;
	for (; *s; s++) {
		int d;
		if (*s == '=') {
			pad++;
			continue;
		}
		const char *x = strchr(B64U, *s);
		if (x && *s)
			d = (int)(x - B64U);
		else if (*s == '+')
			d = 62;
		else if (*s == '/')
			d = 63;
		else
			continue;
		if (pad)
			return -1;
		v = (v << 6) | (uint32_t)d;
		if (++q == 4) {
			if (n + 3 > cap)
				return -1;
			out[n++] = (uint8_t)(v >> 16);
			out[n++] = (uint8_t)(v >> 8);
			out[n++] = (uint8_t)v;
			q = 0;
			v = 0;
		}
	}
	if (q == 1 || (q && q + pad < 4))
		return -1;
	if (q == 2) {
		if (n + 1 > cap)
			return -1;
		out[n++] = (uint8_t)(v >> 4);
	} else if (q == 3) {
		if (n + 2 > cap)
			return -1;
		out[n++] = (uint8_t)(v >> 10);
		out[n++] = (uint8_t)(v >> 2);
	}
	return (long)n;
}

/* ---- small helpers --------------------------------------------------------------------- */

void id_pretty(char *out, const uint8_t h[RNSC_TRUNCATED_HASHLEN])
{
	out[0] = '<';
	cli_hex(out + 1, h, RNSC_TRUNCATED_HASHLEN);
	strcat(out, ">");
}

static int is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int ends_with(const char *s, const char *ext, int fold)
{
	size_t a = strlen(s), b = strlen(ext);
	if (a < b)
		return 0;
	return fold ? strcasecmp(s + a - b, ext) == 0 : strcmp(s + a - b, ext) == 0;
}

/* RNS.prettysize for byte counts. */
static void prettysize(char *out, size_t cap, double n)
{
	static const char *const units[] = {"", "K", "M", "G", "T", "P", "E", "Z"};
	for (size_t i = 0; i < 8; i++) {
		if (fabs(n) < 1000.0) {
			snprintf(out, cap, i ? "%.2f %sB" : "%.0f %sB", n, units[i]);
			return;
		}
		n /= 1000.0;
	}
	snprintf(out, cap, "%.2fYB", n);
}

/* A temporary file next to path, renamed over it on success. */
typedef struct out_file {
	char tmp[4096];
	const char *path;
	int fd;
} out_file;

static int out_open(out_file *o, const char *path)
{
	o->path = path;
	if (snprintf(o->tmp, sizeof(o->tmp), "%s.tmpXXXXXX", path) >= (int)sizeof(o->tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	o->fd = mkstemp(o->tmp);
	if (o->fd >= 0)
		fchmod(o->fd, 0644);
	return o->fd < 0 ? -1 : 0;
}

static int out_write(out_file *o, const void *p, size_t len)
{
	const uint8_t *b = p;
	while (len) {
		ssize_t w = write(o->fd, b, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		len -= (size_t)w;
	}
	return 0;
}

static int out_commit(out_file *o)
{
	int rc = fsync(o->fd);
	if (close(o->fd) != 0)
		rc = -1;
	o->fd = -1;
	if (rc == 0 && rename(o->tmp, o->path) != 0)
		rc = -1;
	if (rc)
		unlink(o->tmp);
	return rc;
}

static void out_abort(out_file *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	unlink(o->tmp);
}

static size_t read_full(FILE *f, uint8_t *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		size_t r = fread(buf + got, 1, len - got, f);
		if (r == 0)
			break;
		got += r;
	}
	return got;
}

static int file_sha256(rnsc_ctx *ctx, const char *path, uint8_t out[32])
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	rnsc_hash h;
	if (rnsc_hash_init(ctx, &h, RNSC_HASH_SHA256)) {
		fclose(f);
		return -1;
	}
	uint8_t buf[65536];
	size_t r;
	int rc = 0;
	while ((r = fread(buf, 1, sizeof(buf), f)) > 0)
		if (rnsc_hash_update(&h, buf, r))
			rc = -1;
	if (ferror(f))
		rc = -1;
	fclose(f);
	if (rc) {
		rnsc_hash_abort(&h);
		return -1;
	}
	return rnsc_hash_final(&h, out) ? -1 : 0;
}

/* ---- rsg ----------------------------------------------------------------------------- */

/* create_rsg: signature || msgpack envelope. *out malloc'ed. meta_kv holds meta_n extra
 * msgpack key/value pairs (-E) appended to meta after signer and pubkey, as rnid does. */
static int rsg_create(const rnsc_identity *id, const uint8_t hash[32], const uint8_t *msg,
		      size_t msg_len, int embed, const uint8_t *meta_kv, size_t meta_kv_len,
		      size_t meta_n, uint8_t **out, size_t *out_len)
{
	uint8_t pub[RNSC_KEYSIZE];
	rnsc_identity_public_bytes(id, pub);
	for (int pass = 0; pass < 2; pass++) {
		uint8_t *buf = NULL;
		size_t cap = 0;
		if (pass == 1) {
			cap = *out_len;
			buf = malloc(cap + RNSC_SIGLEN);
			if (!buf)
				return RNSC_ERR_NOMEM;
		}
		rnsc_mp_writer w;
		rnsc_mp_writer_init(&w, buf ? buf + RNSC_SIGLEN : NULL, cap);
		rnsc_mp_write_map(&w, embed ? 4 : 3);
		rnsc_mp_write_cstr(&w, "hashtype");
		rnsc_mp_write_cstr(&w, "sha256");
		rnsc_mp_write_cstr(&w, "hash");
		rnsc_mp_write_bin(&w, hash, 32);
		rnsc_mp_write_cstr(&w, "meta");
		rnsc_mp_write_map(&w, 2 + meta_n);
		rnsc_mp_write_cstr(&w, "signer");
		rnsc_mp_write_bin(&w, id->hash, RNSC_TRUNCATED_HASHLEN);
		rnsc_mp_write_cstr(&w, "pubkey");
		rnsc_mp_write_bin(&w, pub, RNSC_KEYSIZE);
		if (meta_kv_len)
			rnsc_mp_write_raw(&w, meta_kv, meta_kv_len);
		if (embed) {
			rnsc_mp_write_cstr(&w, "message");
			rnsc_mp_write_bin(&w, msg, msg_len);
		}
		int n = rnsc_mp_writer_finish(&w);
		if (n < 0) {
			free(buf);
			return n;
		}
		if (pass == 0) {
			*out_len = (size_t)n;
			continue;
		}
		int rc = rnsc_identity_sign(id, buf, buf + RNSC_SIGLEN, (size_t)n);
		if (rc) {
			free(buf);
			return rc;
		}
		*out = buf;
		*out_len = (size_t)n + RNSC_SIGLEN;
	}
	return 0;
}

/* The armoured text rnid prints for -B/-b/-U/-F: header, 64-character rows padded with
 * '=', footer. */
static void print_wrapped(enum id_fmt fmt, const uint8_t *rsg, size_t len)
{
	char *t = id_enc(fmt, rsg, len);
	if (!t)
		return;
	static const char head[] = "#### Start of rsg data ", foot[] = " End of rsg data ####";
	printf("\n%s", head);
	for (size_t i = strlen(head); i < RSG_ROW; i++)
		putchar('#');
	putchar('\n');
	const char *p = t;
	while (*p) {
		size_t chars = 0;
		const char *q = p;
		while (*q && chars < RSG_ROW) { /* count code points, not bytes (base256) */
			q++;
			while ((*q & 0xc0) == 0x80)
				q++;
			chars++;
		}
		fwrite(p, 1, (size_t)(q - p), stdout);
		for (; chars < RSG_ROW; chars++)
			putchar('=');
		putchar('\n');
		p = q;
	}
	for (size_t i = strlen(foot); i < RSG_ROW; i++)
		putchar('#');
	printf("%s\n\n", foot);
	free(t);
}

/* A map's value for a str key, or -1. r is positioned at the map header; on success r
 * is left at the value. */
static int mp_find(const uint8_t *p, size_t len, const char *key, rnsc_mp_reader *out)
{
	rnsc_mp_reader r;
	rnsc_mp_reader_init(&r, p, len);
	size_t n;
	if (rnsc_mp_read_map(&r, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		rnsc_mp_token k;
		if (rnsc_mp_next(&r, &k))
			return -1;
		if (k.type == RNSC_MP_STR && k.len == strlen(key) && memcmp(k.p, key, k.len) == 0) {
			*out = r;
			return 0;
		}
		if (k.type == RNSC_MP_ARRAY || k.type == RNSC_MP_MAP) {
			r.pos -= k.size; /* skip the whole container key */
			if (rnsc_mp_skip(&r))
				return -1;
		}
		if (rnsc_mp_skip(&r))
			return -1;
	}
	return -1;
}

/* Byte span of the value at r. */
static int mp_span(rnsc_mp_reader *r, const uint8_t **p, size_t *len)
{
	size_t start = r->pos;
	if (rnsc_mp_skip(r))
		return -1;
	*p = r->p + start;
	*len = r->pos - start;
	return 0;
}

typedef struct rsg_result {
	int valid;
	int have_signer;
	rnsc_identity signer;
	const uint8_t *envelope; /* into the rsg bytes */
	size_t envelope_len;
} rsg_result;

/* validate_rsg. required: NULL (anyone), an identity, or only a hash. */
static void rsg_validate(rnsc_ctx *ctx, const uint8_t *rsg, size_t len, const uint8_t hash[32],
			 const rnsc_identity *req_id, const uint8_t *req_hash, rsg_result *res)
{
	memset(res, 0, sizeof(*res));
	if (len < RNSC_SIGLEN + 1)
		return;
	const uint8_t *env = rsg + RNSC_SIGLEN;
	size_t env_len = len - RNSC_SIGLEN;
	rnsc_mp_reader probe;
	rnsc_mp_reader_init(&probe, env, env_len);
	if (rnsc_mp_skip(&probe))
		return;
	size_t vlen = probe.pos; /* unpackb reads one value */
	res->envelope = env;
	res->envelope_len = vlen;
	rnsc_mp_reader v;
	const char *s;
	size_t sl;
	const uint8_t *b, *meta;
	size_t bl, meta_len;
	if (mp_find(env, vlen, "hashtype", &v) || rnsc_mp_read_str(&v, &s, &sl) || sl != 6 ||
	    memcmp(s, "sha256", 6) != 0)
		return;
	if (mp_find(env, vlen, "hash", &v))
		return;
	rnsc_mp_reader hv = v;
	if (mp_find(env, vlen, "meta", &v) || mp_span(&v, &meta, &meta_len))
		return;
	if (mp_find(meta, meta_len, "signer", &v))
		return;
	if (mp_find(meta, meta_len, "pubkey", &v))
		return;
	if (req_id) {
		res->signer = *req_id;
	} else {
		if (rnsc_mp_read_bin(&v, &b, &bl) ||
		    rnsc_identity_from_public(ctx, &res->signer, b, bl))
			return;
	}
	res->have_signer = 1;
	const uint8_t *want = req_hash ? req_hash : res->signer.hash;
	if (memcmp(want, res->signer.hash, RNSC_TRUNCATED_HASHLEN) != 0)
		return;
	if (rnsc_mp_read_bin(&hv, &b, &bl) || bl != 32 || memcmp(b, hash, 32) != 0)
		return;
	if (rnsc_identity_verify(&res->signer, rsg, RNSC_SIGLEN, env, env_len) == 0)
		res->valid = 1;
}

int id_rsg_check(rnsc_ctx *ctx, const uint8_t *rsg, size_t len, const uint8_t hash[32],
		 const uint8_t *req_hash, uint8_t signer[RNSC_TRUNCATED_HASHLEN])
{
	rsg_result res;
	rsg_validate(ctx, rsg, len, hash, NULL, req_hash, &res);
	if (res.have_signer && signer)
		memcpy(signer, res.signer.hash, RNSC_TRUNCATED_HASHLEN);
	if (res.envelope && (res.envelope < rsg || res.envelope + res.envelope_len > rsg + len))
		return -1; /* cannot happen: the envelope lies inside the input */
	return res.valid ? 1 : res.have_signer ? 2 : 0;
}

static enum id_fmt out_fmt(const id_args *a)
{
	return a->fmt;
}

/* ---- sign ------------------------------------------------------------------------------ */

static int sign_one(const id_args *a, rnsc_ctx *ctx, const rnsc_identity *id, const char *path)
{
	char rsg_path[4200], ids[40];
	id_pretty(ids, id->hash);
	snprintf(rsg_path, sizeof(rsg_path), "%s.rsg", path);
	enum id_fmt fmt = out_fmt(a);
	if (!id->has_private) {
		printf("Cannot sign \"%s\", the identity does not hold a private key\n", path);
		return RID_NO_PRVKEY;
	}
	if (!is_file(path)) {
		printf("The file \"%s\" does not exist\n", path);
		return RID_NO_FILE;
	}
	if (fmt == FMT_BIN && is_file(rsg_path) && !a->force) {
		printf("The signature file \"%s\" already exists, not overwriting\n", rsg_path);
		return RID_FILE_EXISTS;
	}
	if (a->raw) {
		uint8_t *data = NULL, sig[RNSC_SIGLEN];
		size_t dlen = 0;
		int rc = rnsc_store_read_file(NULL, path, RNSC_STORE_MAX_READ, &data, &dlen);
		if (rc == 0)
			rc = rnsc_identity_sign(id, sig, data, dlen);
		free(data);
		if (rc == 0)
			rc = rnsc_store_write_atomic(rsg_path, sig, sizeof(sig), 0644);
		if (rc) {
			printf("Could not sign %s: %s\n", path, rnsc_strerror(rc));
			return RID_UNKNOWN_ERROR;
		}
	} else {
		uint8_t h[32], *rsg = NULL;
		size_t rl = 0;
		if (file_sha256(ctx, path, h)) {
			printf("Could not sign %s: %s\n", path, strerror(errno));
			return RID_UNKNOWN_ERROR;
		}
		int rc = rsg_create(id, h, NULL, 0, 0, NULL, 0, 0, &rsg, &rl);
		if (rc) {
			printf("Could not sign %s: %s\n", path, rnsc_strerror(rc));
			return RID_UNKNOWN_ERROR;
		}
		if (fmt == FMT_BIN)
			rc = rnsc_store_write_atomic(rsg_path, rsg, rl, 0644);
		else
			print_wrapped(fmt, rsg, rl);
		free(rsg);
		if (rc) {
			printf("Could not sign %s: %s\n", path, rnsc_strerror(rc));
			return RID_UNKNOWN_ERROR;
		}
	}
	printf("Signed file %s with %s\n", path, ids);
	return RID_CONTINUE;
}

int id_op_sign(const id_args *a, rnsc_ctx *ctx, const rnsc_identity *id)
{
	for (size_t i = 0; i < a->sign.n; i++) {
		int rc = sign_one(a, ctx, id, a->sign.v[i]);
		if (rc != RID_CONTINUE)
			return rc;
	}
	return RID_OK;
}

/* get_editor_content: $EDITOR, else nano, vim or vi from PATH, on an empty temp file. */
static char *editor_content(size_t *len)
{
	const char *ed = getenv("EDITOR");
	static const char *const fb[] = {"nano", "vim", "vi"};
	char cmd[256];
	if (!ed || !*ed) {
		ed = NULL;
		for (size_t i = 0; i < 3 && !ed; i++) {
			snprintf(cmd, sizeof(cmd), "which %s >/dev/null 2>&1", fb[i]);
			if (system(cmd) == 0)
				ed = fb[i];
		}
	}
	if (!ed) {
		printf("Could not launch editor\n");
		return NULL;
	}
	char tmp[] = "/tmp/rnsc-id-XXXXXX.tmp";
	int fd = mkstemps(tmp, 4);
	if (fd < 0) {
		printf("Could not get content from editor: %s\n", strerror(errno));
		return NULL;
	}
	close(fd);
	pid_t pid = fork();
	if (pid == 0) {
		execlp(ed, ed, tmp, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		printf("Editor exited with error code %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 1);
		unlink(tmp);
		return NULL;
	}
	uint8_t *buf = NULL;
	int rc = rnsc_store_read_file(NULL, tmp, RNSC_STORE_MAX_READ, &buf, len);
	unlink(tmp);
	if (rc) {
		printf("Could not get content from editor: %s\n", rnsc_strerror(rc));
		return NULL;
	}
	return (char *)buf;
}

/* -E [path] and --meta-spec: rnid's spec is path + ".spec" unless given, and only used when
 * it exists. Returns RID_CONTINUE with the pairs, or an exit code after saying why. */
static int embed_meta(const id_args *a, uint8_t **kv, size_t *kv_len, size_t *n)
{
	if (!a->embed_meta) { /* rnid itself dies with a TypeError (exit 1) on a bare -E */
		printf("No metadata file specified for -E\n");
		return 1;
	}
	char spec[4200], why[400];
	const char *path = a->embed_meta;
	if (a->meta_spec && *a->meta_spec)
		snprintf(spec, sizeof(spec), "%s", a->meta_spec);
	else
		snprintf(spec, sizeof(spec), "%s.spec", path);
	if (!is_file(path)) {
		printf("Metadata file %s does not exist\n", path);
		return RID_NO_FILE;
	}
	int have_spec = is_file(spec);
	printf("Embedding metadata from %s%s%s\n", path, have_spec ? " using spec from " : "",
	       have_spec ? spec : "");
	if (id_meta_load(path, have_spec ? spec : NULL, kv, kv_len, n, why, sizeof(why))) {
		printf("Could not load metadata from %s: %s\n", path, why);
		return RID_UNKNOWN_ERROR;
	}
	return RID_CONTINUE;
}

int id_op_sign_message(const id_args *a, rnsc_ctx *ctx, const rnsc_identity *id)
{
	enum id_fmt fmt = out_fmt(a);
	char ids[40];
	if (fmt == FMT_BIN && !a->write) {
		printf("No write path specified\n");
		return RID_INVALID_ARGS;
	}
	if (!id) {
		printf("Cannot sign, no working identity available\n");
		return RID_NO_IDENTITY;
	}
	if (!id->has_private) {
		printf("Cannot sign, the identity does not hold a private key\n");
		return RID_NO_PRVKEY;
	}
	id_pretty(ids, id->hash);
	char *msg = NULL;
	size_t ml = 0;
	if (a->read) {
		if (!a->sign_message_empty) {
			printf("Both an input file and command-line provided message was specified, "
			       "aborting\n");
			return RID_INVALID_ARGS;
		}
		if (!is_file(a->read)) {
			printf("The file %s does not exist\n", a->read);
			return RID_NO_FILE;
		}
		int rc = rnsc_store_read_file(NULL, a->read, RNSC_STORE_MAX_READ, (uint8_t **)&msg,
					      &ml);
		if (rc) {
			printf("Could not sign message: %s\n", rnsc_strerror(rc));
			return RID_UNKNOWN_ERROR;
		}
		if (!rnsc_mp_utf8_valid((const uint8_t *)msg, ml)) { /* read as utf-8 text */
			printf("Could not sign message: %s is not UTF-8 text\n", a->read);
			free(msg);
			return RID_UNKNOWN_ERROR;
		}
	} else if (a->sign_message_empty) {
		msg = editor_content(&ml);
		if (!msg)
			return RID_READ_ERROR;
	} else {
		ml = strlen(a->sign_message);
		msg = malloc(ml + 1);
		if (!msg)
			return RID_UNKNOWN_ERROR;
		memcpy(msg, a->sign_message, ml + 1);
	}
	if (ml == 0) {
		printf("No message specified\n");
		free(msg);
		return RID_INVALID_ARGS;
	}
	uint8_t *kv = NULL;
	size_t kv_len = 0, kv_n = 0;
	if (a->embed_meta_given) {
		int mrc = embed_meta(a, &kv, &kv_len, &kv_n);
		if (mrc != RID_CONTINUE) {
			free(msg);
			return mrc;
		}
	}
	uint8_t h[32], *rsg = NULL;
	size_t rl = 0;
	int rc = rnsc_sha256(ctx, h, (const uint8_t *)msg, ml);
	if (rc == 0)
		rc = rsg_create(id, h, (const uint8_t *)msg, ml, 1, kv, kv_len, kv_n, &rsg, &rl);
	free(msg);
	free(kv);
	if (rc) {
		printf("Could not sign message: %s\n", rnsc_strerror(rc));
		return RID_UNKNOWN_ERROR;
	}
	int ret = RID_OK;
	if (fmt == FMT_BIN) {
		char path[4200];
		snprintf(path, sizeof(path), "%s%s", a->write,
			 ends_with(a->write, ".rsm", 0) ? "" : ".rsm");
		if (is_file(path) && !a->force) {
			printf("The signature file \"%s\" already exists, not overwriting\n", path);
			ret = RID_FILE_EXISTS;
		} else if ((rc = rnsc_store_write_atomic(path, rsg, rl, 0644))) {
			printf("Could not sign message: %s\n", rnsc_strerror(rc));
			ret = RID_UNKNOWN_ERROR;
		} else {
			printf("Message signed with %s saved to %s\n", ids, path);
		}
	} else {
		print_wrapped(fmt, rsg, rl);
		printf("Message signed with %s\n", ids);
	}
	free(rsg);
	return ret;
}

/* ---- validate ------------------------------------------------------------------------- */

/* The required signer of -V: the working identity, or the hex hash given to -i. */
typedef struct req_signer {
	const rnsc_identity *id;
	uint8_t hash[RNSC_TRUNCATED_HASHLEN];
	int have_hash;
	char desc[40];
} req_signer;

static int req_from_args(const id_args *a, const rnsc_identity *id, req_signer *r)
{
	memset(r, 0, sizeof(*r));
	if (id) {
		r->id = id;
		id_pretty(r->desc, id->hash);
		return RID_CONTINUE;
	}
	if (!a->identity)
		return RID_CONTINUE;
	const char *s = a->identity;
	if (strlen(s) != 2 * RNSC_TRUNCATED_HASHLEN) {
		printf("Invalid identity hash length\n");
		return RID_INVALID_IDENTITY;
	}
	if (cli_unhex(r->hash, sizeof(r->hash), s) != RNSC_TRUNCATED_HASHLEN) {
		size_t pos = 0;
		while (pos < strlen(s) && strchr("0123456789abcdefABCDEF", s[pos]))
			pos++;
		printf("Invalid identity hash: non-hexadecimal number found in fromhex() arg at "
		       "position %zu\n",
		       pos);
		return RID_INVALID_IDENTITY;
	}
	r->have_hash = 1;
	id_pretty(r->desc, r->hash);
	return RID_CONTINUE;
}

static int read_small(const char *path, uint8_t **buf, size_t *len)
{
	int rc = rnsc_store_read_file(NULL, path, MAX_SIG_FILE, buf, len);
	if (rc)
		printf("Could not read rsg: %s\n", rnsc_strerror(rc));
	return rc;
}

/* Python's repr() of a float. */
static void pyfloat_repr(char *out, size_t cap, double v)
{
	if (isinf(v)) {
		snprintf(out, cap, v > 0 ? "inf" : "-inf");
		return;
	}
	if (isnan(v)) {
		snprintf(out, cap, "nan");
		return;
	}
	for (int p = 1; p <= 17; p++) {
		snprintf(out, cap, "%.*g", p, v);
		if (strtod(out, NULL) == v)
			break;
	}
	if (!strpbrk(out, ".einn"))
		strncat(out, ".0", cap - strlen(out) - 1);
}

static void meta_print_value(const char *lead, const char *val)
{
	size_t ll = strlen(lead), vl = strlen(val), off = 0;
	do {
		size_t k = vl - off > 64 ? 64 : vl - off;
		if (off == 0)
			printf("%s", lead);
		else
			printf("%*s", (int)ll, "");
		printf("%.*s\n", (int)k, val + off);
		off += k;
	} while (off < vl);
}

/* Python's str() of a simple list (str, int, float, bool, None, bytes items). */
static int list_repr(rnsc_mp_reader *r, size_t n, char *out, size_t cap)
{
	size_t o = 0;
	o += (size_t)snprintf(out + o, cap - o, "[");
	for (size_t i = 0; i < n && o < cap; i++) {
		rnsc_mp_token t;
		if (rnsc_mp_next(r, &t))
			return -1;
		if (i)
			o += (size_t)snprintf(out + o, cap - o, ", ");
		if (o >= cap)
			break;
		switch (t.type) {
		case RNSC_MP_STR:
			o += (size_t)snprintf(out + o, cap - o, "'%.*s'", (int)t.len,
					      (const char *)t.p);
			break;
		case RNSC_MP_UINT:
			o += (size_t)snprintf(out + o, cap - o, "%llu", (unsigned long long)t.u);
			break;
		case RNSC_MP_INT:
			o += (size_t)snprintf(out + o, cap - o, "%lld", (long long)t.i);
			break;
		case RNSC_MP_NIL:
			o += (size_t)snprintf(out + o, cap - o, "None");
			break;
		case RNSC_MP_BOOL:
			o += (size_t)snprintf(out + o, cap - o, t.boolean ? "True" : "False");
			break;
		default:
			return -1;
		}
	}
	if (o < cap)
		snprintf(out + o, cap - o, "]");
	return 0;
}

/* The --meta listing: one line per entry, type letter, indent, key=value in 64-character
 * slices. */
static int meta_recurse(rnsc_mp_reader *r, const char *key, size_t klen, int level)
{
	char indent[80] = "";
	for (int i = 0; i < level && i < 39; i++)
		strcat(indent, "  ");
	rnsc_mp_token t;
	if (rnsc_mp_next(r, &t))
		return -1;
	if (t.type == RNSC_MP_MAP) {
		printf("d%s%.*s:\n", indent, (int)klen, key);
		for (size_t i = 0; i < t.len; i++) {
			rnsc_mp_token k;
			if (rnsc_mp_next(r, &k) || k.type != RNSC_MP_STR)
				return -1;
			if (meta_recurse(r, (const char *)k.p, k.len, level + 1))
				return -1;
		}
		return 0;
	}
	char lead[200], *val = NULL;
	char num[64];
	int etype = 'u';
	switch (t.type) {
	case RNSC_MP_STR:
		etype = 's';
		val = strndup((const char *)t.p, t.len);
		break;
	case RNSC_MP_BIN:
		etype = 'b';
		val = malloc(2 * t.len + 1);
		if (val)
			cli_hex(val, t.p, t.len);
		break;
	case RNSC_MP_UINT:
		etype = 'i';
		snprintf(num, sizeof(num), "%llu", (unsigned long long)t.u);
		val = strdup(num);
		break;
	case RNSC_MP_INT:
		etype = 'i';
		snprintf(num, sizeof(num), "%lld", (long long)t.i);
		val = strdup(num);
		break;
	case RNSC_MP_FLOAT32:
	case RNSC_MP_FLOAT64:
		etype = 'f';
		pyfloat_repr(num, sizeof(num), t.type == RNSC_MP_FLOAT32 ? (double)t.f32 : t.f64);
		val = strdup(num);
		break;
	case RNSC_MP_NIL:
		if (klen == 4 && memcmp(key, "note", 4) == 0)
			return 0;
		etype = 'N';
		val = strdup("None");
		break;
	case RNSC_MP_BOOL: /* type(True) is bool, not int: rnid's 'u' */
		val = strdup(t.boolean ? "True" : "False");
		break;
	case RNSC_MP_ARRAY:
		etype = 'l';
		val = malloc(8192);
		if (val && list_repr(r, t.len, val, 8192)) {
			free(val);
			val = NULL;
		}
		break;
	default:
		r->pos -= t.size;
		if (rnsc_mp_skip(r))
			return -1;
		val = strdup("");
		break;
	}
	snprintf(lead, sizeof(lead), "%c%s%.*s=", etype, indent, (int)klen, key);
	if (!val) {
		printf("E%s%.*s=<Decode Error>\n", indent, (int)klen, key);
		return 0;
	}
	meta_print_value(lead, val);
	free(val);
	return 0;
}

static int validate_message(const id_args *a, rnsc_ctx *ctx, const rnsc_identity *id,
			    const char *path)
{
	if (!is_file(path)) {
		printf("The signature file \"%s\" does not exist\n", path);
		return RID_NO_FILE;
	}
	uint8_t *rsg = NULL;
	size_t len = 0;
	if (read_small(path, &rsg, &len))
		return RID_READ_ERROR;
	req_signer req;
	int rc = req_from_args(a, id, &req);
	if (rc != RID_CONTINUE) {
		free(rsg);
		return rc;
	}
	rnsc_mp_reader v;
	const uint8_t *msg = NULL;
	size_t ml = 0;
	int ret = RID_CONTINUE;
	rnsc_mp_reader whole;
	rnsc_mp_reader_init(&whole, rsg + (len > RNSC_SIGLEN ? RNSC_SIGLEN : len),
			    len > RNSC_SIGLEN ? len - RNSC_SIGLEN : 0);
	rnsc_mp_token top;
	if (rnsc_mp_peek(&whole, &top) || rnsc_mp_skip(&whole)) {
		printf("Error while validating %s: argument of type 'NoneType' is not iterable\n",
		       path);
		ret = RID_UNKNOWN_ERROR;
		goto out;
	}
	if (top.type != RNSC_MP_MAP || mp_find(rsg + RNSC_SIGLEN, whole.pos, "message", &v) != 0) {
		printf("No embedded message in %s\n", path);
		ret = RID_INVALID_SIGNATURE;
		goto out;
	}
	if (rnsc_mp_read_bin(&v, &msg, &ml) && rnsc_mp_read_str(&v, (const char **)&msg, &ml)) {
		printf("Error while validating %s: Invalid input type for rsg creation\n", path);
		ret = RID_UNKNOWN_ERROR;
		goto out;
	}
	uint8_t h[32];
	if (ml == 0) {
		printf("Error while validating %s: No message specified for rsg validation\n",
		       path);
		ret = RID_UNKNOWN_ERROR;
		goto out;
	}
	if (rnsc_sha256(ctx, h, msg, ml)) {
		ret = RID_UNKNOWN_ERROR;
		goto out;
	}
	rsg_result res;
	rsg_validate(ctx, rsg, len, h, req.id, req.have_hash ? req.hash : NULL, &res);
	if (!res.valid) {
		printf("Invalid signature in %s", path);
		if (req.id || req.have_hash)
			printf("\nThe message was NOT signed by %s", req.desc);
		printf("\n");
		ret = RID_INVALID_SIGNATURE;
		goto out;
	}
	char ids[40];
	id_pretty(ids, res.signer.hash);
	if (a->meta) {
		printf("RSM Metadata\n============\n\n");
		const uint8_t *meta;
		size_t meta_len;
		rnsc_mp_reader mv;
		if (mp_find(res.envelope, res.envelope_len, "meta", &mv) == 0 &&
		    mp_span(&mv, &meta, &meta_len) == 0) {
			rnsc_mp_reader m;
			rnsc_mp_reader_init(&m, meta, meta_len);
			size_t n;
			if (rnsc_mp_read_map(&m, &n) == 0)
				for (size_t i = 0; i < n; i++) {
					rnsc_mp_token k;
					if (rnsc_mp_next(&m, &k) || k.type != RNSC_MP_STR ||
					    meta_recurse(&m, (const char *)k.p, k.len, 1))
						break;
				}
		}
		printf("\nValidation\n==========\n");
	}
	printf("\nSignature is valid, the%s message was signed by %s%s\n\n",
	       a->meta ? "" : " following", ids, a->meta ? "" : ":");
	if (a->meta)
		printf("Message\n=======\n\n");
	fwrite(msg, 1, ml, stdout);
	printf("\n");
	ret = RID_CONTINUE;
out:
	free(rsg);
	return ret;
}

static int validate_one(const id_args *a, rnsc_ctx *ctx, const rnsc_identity *id, const char *path)
{
	if (ends_with(path, ".rsm", 1))
		return validate_message(a, ctx, id, path);
	char sig_path[4200], file_path[4200];
	if (ends_with(path, ".rsg", 1)) {
		snprintf(sig_path, sizeof(sig_path), "%s", path);
		snprintf(file_path, sizeof(file_path), "%.*s", (int)(strlen(path) - 4), path);
	} else {
		snprintf(sig_path, sizeof(sig_path), "%s.rsg", path);
		snprintf(file_path, sizeof(file_path), "%s", path);
	}
	if (!is_file(file_path)) {
		printf("The validation target \"%s\" does not exist\n", file_path);
		return RID_NO_FILE;
	}
	if (!is_file(sig_path)) {
		printf("No signature file exists for \"%s\"\n", file_path);
		return RID_NO_FILE;
	}
	uint8_t *rsg = NULL;
	size_t len = 0;
	if (read_small(sig_path, &rsg, &len))
		return RID_READ_ERROR;
	int ret;
	if (len == RNSC_SIGLEN) { /* the legacy format: a bare signature over the file */
		char ids[40];
		if (!id) {
			printf("Cannot validate legacy rsg signatures without an explicit required "
			       "identity\n");
			free(rsg);
			return RID_NO_IDENTITY;
		}
		id_pretty(ids, id->hash);
		uint8_t *data = NULL;
		size_t dl = 0;
		int rc = rnsc_store_read_file(NULL, file_path, RNSC_STORE_MAX_READ, &data, &dl);
		if (rc) {
			printf("Could not validate signature: %s\n", rnsc_strerror(rc));
			free(rsg);
			return RID_READ_ERROR;
		}
		rc = rnsc_identity_verify(id, rsg, len, data, dl);
		free(data);
		free(rsg);
		if (rc) {
			printf("Invalid signature %s for file %s\nThis file was NOT signed by %s\n",
			       sig_path, file_path, ids);
			return RID_INVALID_SIGNATURE;
		}
		printf("Signature is valid, the file %s was signed by %s\n", file_path, ids);
		return RID_OK; /* rnid exits here even inside a list */
	}
	req_signer req;
	ret = req_from_args(a, id, &req);
	if (ret != RID_CONTINUE)
		goto out;
	uint8_t h[32];
	if (file_sha256(ctx, file_path, h)) {
		printf("Could not read %s: %s\n", file_path, strerror(errno));
		ret = RID_READ_ERROR;
		goto out;
	}
	rsg_result res;
	rsg_validate(ctx, rsg, len, h, req.id, req.have_hash ? req.hash : NULL, &res);
	if (!res.valid) {
		printf("Invalid signature %s for file %s", sig_path, file_path);
		if (req.id || req.have_hash)
			printf("\nThis file was NOT signed by %s", req.desc);
		printf("\n");
		ret = RID_INVALID_SIGNATURE;
		goto out;
	}
	char ids[40];
	id_pretty(ids, res.signer.hash);
	printf("Signature is valid, the file %s was signed by %s\n", file_path, ids);
	ret = RID_CONTINUE;
out:
	free(rsg);
	return ret;
}

int id_op_validate(const id_args *a, rnsc_ctx *ctx, const rnsc_identity *id)
{
	for (size_t i = 0; i < a->validate.n; i++) {
		int rc = validate_one(a, ctx, id, a->validate.v[i]);
		if (rc != RID_CONTINUE)
			return rc;
	}
	return RID_OK;
}

/* ---- encrypt / decrypt ------------------------------------------------------------------ */

static int encrypt_one(const id_args *a, const rnsc_identity *id, const char *path)
{
	char rfe[4200], ids[40], sz[40];
	snprintf(rfe, sizeof(rfe), "%s", a->write ? a->write : path);
	if (!a->write)
		strncat(rfe, ".rfe", sizeof(rfe) - strlen(rfe) - 1);
	id_pretty(ids, id->hash);
	if (!is_file(path)) {
		printf("The file \"%s\" does not exist\n", path);
		return RID_NO_FILE;
	}
	if (is_file(rfe) && !a->force) {
		printf("The encryption output file \"%s\" already exists, not overwriting\n", rfe);
		return RID_FILE_EXISTS;
	}
	FILE *in = fopen(path, "rb");
	if (!in) {
		printf("\nError reading %s for encryption: %s\n", path, strerror(errno));
		return RID_WRITE_ERROR;
	}
	out_file o;
	if (out_open(&o, rfe)) {
		printf("\nError writing encrypted output to %s: %s\n", rfe, strerror(errno));
		fclose(in);
		return RID_WRITE_ERROR;
	}
	uint8_t *pt = malloc(ENC_CHUNK), *ct = malloc(rnsc_identity_token_len(ENC_CHUNK));
	int ret = RID_CONTINUE;
	size_t wrote = 0;
	if (!pt || !ct) {
		printf("\nError reading %s for encryption: out of memory\n", path);
		ret = RID_WRITE_ERROR;
		goto fail;
	}
	for (;;) {
		size_t n = read_full(in, pt, ENC_CHUNK);
		if (ferror(in)) {
			printf("\nError reading %s for encryption: %s\n", path, strerror(errno));
			ret = RID_WRITE_ERROR;
			goto fail;
		}
		if (n) {
			int tl = rnsc_identity_encrypt(id, ct, rnsc_identity_token_len(ENC_CHUNK),
						       pt, n, NULL);
			if (tl < 0 || out_write(&o, ct, (size_t)tl)) {
				printf("\nError writing encrypted output to %s: %s\n", rfe,
				       tl < 0 ? rnsc_strerror(tl) : strerror(errno));
				ret = RID_WRITE_ERROR;
				goto fail;
			}
			wrote += (size_t)tl;
		}
		prettysize(sz, sizeof(sz), (double)wrote);
		printf("\rWrote %s to %s   ", sz, rfe);
		fflush(stdout);
		if (!n)
			break;
	}
	if (out_commit(&o)) {
		printf("\nError writing encrypted output to %s: %s\n", rfe, strerror(errno));
		ret = RID_WRITE_ERROR;
	} else {
		printf("\nFile %s encrypted for %s to %s\n", path, ids, rfe);
	}
	free(pt);
	free(ct);
	fclose(in);
	return ret;
fail:
	out_abort(&o);
	free(pt);
	free(ct);
	fclose(in);
	return ret;
}

int id_op_encrypt(const id_args *a, rnsc_ctx *ctx, const rnsc_identity *id)
{
	(void)ctx;
	for (size_t i = 0; i < a->encrypt.n; i++) {
		int rc = encrypt_one(a, id, a->encrypt.v[i]);
		if (rc != RID_CONTINUE)
			return rc;
	}
	return RID_OK;
}

static int decrypt_one(const id_args *a, const rnsc_identity *id, const char *rfe)
{
	char out_path[4200], ids[40], sz[40];
	if (!ends_with(rfe, ".rfe", 0)) {
		printf("The file %s does not appear to be a Reticulum encrypted file\n", rfe);
		return RID_INVALID_FILE;
	}
	if (a->write)
		snprintf(out_path, sizeof(out_path), "%s", a->write);
	else
		snprintf(out_path, sizeof(out_path), "%.*s", (int)(strlen(rfe) - 4), rfe);
	if (!out_path[0]) {
		printf("Invalid output filename\n");
		return RID_INVALID_FILE;
	}
	id_pretty(ids, id->hash);
	if (!id->has_private) {
		printf("Cannot decrypt \"%s\", the identity does not hold a private key\n", rfe);
		return RID_NO_PRVKEY;
	}
	if (!is_file(rfe)) {
		printf("The file \"%s\" does not exist\n", rfe);
		return RID_NO_FILE;
	}
	if (is_file(out_path) && !a->force) {
		printf("The decryption output file \"%s\" already exists, not overwriting\n",
		       out_path);
		return RID_FILE_EXISTS;
	}
	FILE *in = fopen(rfe, "rb");
	if (!in) {
		printf("\nError reading %s for decryption: %s\n", rfe, strerror(errno));
		return RID_WRITE_ERROR;
	}
	out_file o;
	if (out_open(&o, out_path)) {
		printf("\nError writing decrypted output to %s: %s\n", out_path, strerror(errno));
		fclose(in);
		return RID_WRITE_ERROR;
	}
	uint8_t *ct = malloc(DEC_CHUNK), *pt = malloc(DEC_CHUNK);
	int ret = RID_CONTINUE;
	size_t wrote = 0;
	if (!pt || !ct) {
		printf("\nError reading %s for decryption: out of memory\n", rfe);
		ret = RID_WRITE_ERROR;
		goto fail;
	}
	for (;;) {
		size_t n = read_full(in, ct, DEC_CHUNK);
		if (ferror(in)) {
			printf("\nError reading %s for decryption: %s\n", rfe, strerror(errno));
			ret = RID_WRITE_ERROR;
			goto fail;
		}
		if (!n)
			break;
		int pl = rnsc_identity_decrypt(id, pt, DEC_CHUNK, ct, n, NULL, 0, 0, NULL);
		if (pl < 0) {
			printf("The provided identity could not decrypt the file\n");
			ret = RID_DECRYPT_FAILED;
			goto fail;
		}
		if (out_write(&o, pt, (size_t)pl)) {
			printf("\nError writing decrypted output to %s: %s\n", out_path,
			       strerror(errno));
			ret = RID_WRITE_ERROR;
			goto fail;
		}
		wrote += (size_t)pl;
		prettysize(sz, sizeof(sz), (double)wrote);
		printf("\rWrote %s to %s   ", sz, out_path);
		fflush(stdout);
	}
	if (out_commit(&o)) {
		printf("\nError writing decrypted output to %s: %s\n", out_path, strerror(errno));
		ret = RID_WRITE_ERROR;
	} else {
		printf("\nFile %s decrypted to %s\n", rfe, out_path);
	}
	free(pt);
	free(ct);
	fclose(in);
	return ret;
fail:
	out_abort(&o);
	free(pt);
	free(ct);
	fclose(in);
	return ret;
}

int id_op_decrypt(const id_args *a, rnsc_ctx *ctx, const rnsc_identity *id)
{
	(void)ctx;
	for (size_t i = 0; i < a->decrypt.n; i++) {
		int rc = decrypt_one(a, id, a->decrypt.v[i]);
		if (rc != RID_CONTINUE)
			return rc;
	}
	return RID_OK;
}
