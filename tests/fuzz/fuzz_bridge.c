/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for rnsc-conformance-bridge's request handling (src/bridge/bridge.c and
 * the primitive commands), with the OpenSSL crypto plugin compiled in (fuzz_wire.h).
 *
 * Input: one request line. Checked beyond "no crash, no UB, no leak": every line gets
 * exactly one answer, a JSON object with a boolean "success", and an error string when it
 * failed. identity_to_file points at a folder that does not exist, so no files pile up. The
 * wire_* table is not plugged in: those commands start live nodes and sockets.
 */
#include "fuzz_wire.h"

#include "bridge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rnsc_bridge b;
	rnsc_bridge_init(&b, fuzz_ctx());
	snprintf(b.tmpdir, sizeof(b.tmpdir), "/nonexistent/rnsc-fuzz-bridge");
	char *out = rnsc_bridge_handle(&b, (const char *)data, size);
	FUZZ_CHECK(out != NULL);
	json_error_t je;
	json_t *r = json_loads(out, 0, &je);
	FUZZ_CHECK(r && json_is_object(r));
	json_t *ok = json_object_get(r, "success");
	FUZZ_CHECK(json_is_boolean(ok));
	if (!json_is_true(ok))
		FUZZ_CHECK(json_is_string(json_object_get(r, "error")));
	else
		FUZZ_CHECK(json_is_object(json_object_get(r, "result")));
	FUZZ_CHECK(json_object_get(r, "id") != NULL);
	json_decref(r);
	free(out);
	return 0;
}
