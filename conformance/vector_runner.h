/* SPDX-License-Identifier: MIT */
/*
 * Runs the data-file test vectors (the .txt files in conformance/vectors, format in
 * vectorfile.h) against one crypto backend, calling its ops table directly so
 * a disagreement names the backend and not the dispatcher.
 *
 * Ops and their keys (hex unless noted; Source is required in every stanza;
 * Result = RNSC_ERR_X means the call must return exactly that code):
 *   sha256, sha512        Msg, Output, [Repeat = N: Msg repeated N times]
 *                         (also run through the streaming API when served)
 *   hmac_sha256           Key, Msg, Output, [Truncate = N: compare N bytes]
 *   hkdf_sha256           IKM, Salt, Info, L (decimal), Output, [Result]
 *   aes256_cbc_encrypt    Key, IV, Plaintext, Ciphertext, [Result]
 *   aes256_cbc_decrypt    (both directions are checked for either op)
 *   x25519                Scalar, U, Output | Result
 *   x25519_public         Private, Public
 *   ed25519               Seed, Public, Msg, Signature (derive, sign, verify)
 *   ed25519_verify        Public, Msg, Signature, [Result]
 *
 * Links only against err.c (rnsc_err_from_name / rnsc_err_name) and the
 * backend's ops; no other librnsc function is used.
 */
#ifndef RNSC_CONF_VECTOR_RUNNER_H
#define RNSC_CONF_VECTOR_RUNNER_H

#include "crypto.h"

/*
 * Runs every stanza of every *.txt file in vectors_dir (in name order) on
 * be->ops / be->inst. Counts each stanza once: passed, failed, or not_served
 * when the backend's prims lack the stanza's primitive. Stanzas are checked
 * for form (known Op, known keys, Source, well-formed values) before the
 * backend is asked, so a malformed vector fails even on a backend that does
 * not serve it. Failures go to stderr as "file:line: op on backend 'name':
 * reason", malformed stanzas and files (counted as failed; a file stops at
 * its first parse error) as "file:line: reason [op, backend 'name']". The
 * counters are zeroed first; any of them may be NULL.
 *
 * Returns 0 when the files could be enumerated (check *failed for the
 * verdict), RNSC_ERR_INVAL for a NULL backend/ops/dir, RNSC_ERR_NOENT or
 * RNSC_ERR_IO when the directory cannot be read, RNSC_ERR_NOTFOUND when it
 * holds no *.txt file (an empty run must not look like a pass), RNSC_ERR_NOMEM.
 */
int conf_run_vectors_on_backend(const rnsc_crypto_backend *be, const char *vectors_dir,
				unsigned *passed, unsigned *failed, unsigned *not_served);

#endif
