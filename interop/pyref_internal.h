/* SPDX-License-Identifier: MIT */
/*
 * Shared plumbing of the interop library (pyref.c, ref_crypto.c, ffi_swap.c); not installed.
 * Include <Python.h> (through this header) before any system header, as CPython requires.
 *
 * Threading: pyref_enter() takes the GIL and makes ref's context the target of the harness's
 * log lines; pyref_leave() restores both. Everything between the two may touch Python objects.
 * Calls nest (a swapped primitive may call back into the reference backend), so the previous
 * log target is kept in the returned state.
 */
#ifndef RNSC_PYREF_INTERNAL_H
#define RNSC_PYREF_INTERNAL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include "pyref.h"

struct rnsc_ffi_binding;

struct rnsc_pyref {
	rnsc_ctx *ctx; /* borrowed; outlives the handle */
	char version[32];
	struct rnsc_ffi_binding *swap; /* owned; non-NULL while this handle's swap is installed */
};

typedef struct pyref_gil {
	PyGILState_STATE gil;
	rnsc_ctx *prev_log_ctx;
} pyref_gil;

pyref_gil pyref_enter(rnsc_pyref *ref);
void pyref_leave(pyref_gil st);

/* Calls rnsc_refharness.<fn>(*args), args built by Py_BuildValue(fmt, ...) where fmt describes a
 * tuple, e.g. "(y#y#)". Returns a new reference, or NULL after logging the traceback (the
 * Python error indicator is cleared). GIL held. */
PyObject *pyref_call(rnsc_pyref *ref, const char *fn, const char *fmt, ...);
/* Same with a ready argument tuple (borrowed). */
PyObject *pyref_call_args(rnsc_pyref *ref, const char *fn, PyObject *args);
/* Logs the pending Python exception with its traceback and clears it; returns RNSC_ERR_PYTHON.
 * GIL held. */
int pyref_exc(rnsc_pyref *ref, const char *what);
/* Turns a harness result into an rnsc return value and drops the reference to res:
 * bytes -> copied to out (RNSC_ERR_BUFSIZE beyond cap; when exact != 0 any other length is a
 * harness failure), returns the length; str -> the rnsc code it names; None -> 0.
 * res NULL (call failed) -> RNSC_ERR_PYTHON. GIL held. */
int pyref_result(rnsc_pyref *ref, const char *fn, PyObject *res, uint8_t *out, size_t cap,
		 size_t exact);

/* ffi_swap.c: the C entry points handed to Python, bound to one context. */
struct rnsc_ffi_binding *rnsc_ffi_binding_new(rnsc_ctx *crypto_ctx);
void rnsc_ffi_binding_del(struct rnsc_ffi_binding *b);
/* {name: (address, signature)} of every entry point plus "errnames": {code: name}. New reference or NULL with
 * a Python exception set. GIL held. */
PyObject *rnsc_ffi_binding_table(void);
unsigned long rnsc_ffi_binding_calls(const struct rnsc_ffi_binding *b, enum rnsc_prim prim);
/* Prepares a libffi call interface for every entry's signature and calls the SHA-256 entry
 * through libffi against a direct call; 0 or a negative rnsc_err. Resets the call counters. */
int rnsc_ffi_binding_check(struct rnsc_ffi_binding *b);

#endif
