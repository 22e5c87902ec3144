/* SPDX-License-Identifier: MIT */
/*
 * The generic bridge to rnsc_wireharness.py. The module is imported once (under the GIL, into
 * the interpreter pyref.c started) and kept for the life of the process, like the reference
 * harness itself.
 */
#include "pyref_internal.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ref_wire.h"

#define WHO "ref_wire"
#define MODULE "rnsc_wireharness"

static PyObject *g_wire; /* GIL */

static PyObject *wire_module(rnsc_pyref *ref)
{
	if (!g_wire) {
		g_wire = PyImport_ImportModule(MODULE);
		if (!g_wire)
			pyref_exc(ref, "import " MODULE);
	}
	return g_wire;
}

static PyObject *build_args(const char *fmt, va_list ap)
{
	PyObject *args = PyTuple_New((Py_ssize_t)strlen(fmt));
	if (!args)
		return NULL;
	for (Py_ssize_t i = 0; fmt[i]; i++) {
		PyObject *o = NULL;
		switch (fmt[i]) {
		case 'b': {
			const uint8_t *p = va_arg(ap, const uint8_t *);
			size_t n = va_arg(ap, size_t);
			if (p)
				o = PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)n);
			else
				o = Py_NewRef(Py_None);
			break;
		}
		case 'i':
			o = PyLong_FromLongLong(va_arg(ap, long long));
			break;
		case 'd':
			o = PyFloat_FromDouble(va_arg(ap, double));
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);
			o = s ? PyUnicode_FromString(s) : Py_NewRef(Py_None);
			break;
		}
		default:
			PyErr_Format(PyExc_ValueError, "bad argument format '%c'", fmt[i]);
			break;
		}
		if (!o) {
			Py_DECREF(args);
			return NULL;
		}
		PyTuple_SET_ITEM(args, i, o);
	}
	return args;
}

/* Copies n bytes (+ a NUL) into the result buffer; returns the offset or -1. */
static long stash(rnsc_refwire_res *res, const void *p, size_t n)
{
	if (res->used + n + 1 > res->cap) {
		size_t cap = res->cap ? res->cap : 256;
		while (cap < res->used + n + 1)
			cap *= 2;
		uint8_t *b = realloc(res->buf, cap);
		if (!b)
			return -1;
		res->buf = b;
		res->cap = cap;
	}
	long at = (long)res->used;
	if (n)
		memcpy(res->buf + at, p, n);
	res->buf[at + (long)n] = 0;
	res->used += n + 1;
	return at;
}

static int add_item(rnsc_pyref *ref, rnsc_refwire_res *res, PyObject *o, long *offs)
{
	if (res->n >= RNSC_REFWIRE_MAX_ITEMS) {
		rnsc_log(ref->ctx, RNSC_LOG_ERROR, WHO, "harness returned too many items");
		return RNSC_ERR_PYTHON;
	}
	rnsc_refwire_item *it = &res->item[res->n];
	memset(it, 0, sizeof(*it));
	offs[res->n] = -1;
	if (o == Py_None) {
		it->kind = RNSC_RW_NONE;
	} else if (PyBool_Check(o) || PyLong_Check(o)) {
		it->kind = RNSC_RW_INT;
		it->i = PyLong_AsLongLong(o);
		if (it->i == -1 && PyErr_Occurred())
			return pyref_exc(ref, "harness int result");
	} else if (PyBytes_Check(o) || PyByteArray_Check(o)) {
		const char *p = PyBytes_Check(o) ? PyBytes_AS_STRING(o) : PyByteArray_AS_STRING(o);
		size_t n =
			(size_t)(PyBytes_Check(o) ? PyBytes_GET_SIZE(o) : PyByteArray_GET_SIZE(o));
		it->kind = RNSC_RW_BYTES;
		it->len = n;
		if ((offs[res->n] = stash(res, p, n)) < 0)
			return RNSC_ERR_NOMEM;
	} else if (PyUnicode_Check(o)) {
		Py_ssize_t n;
		const char *s = PyUnicode_AsUTF8AndSize(o, &n);
		if (!s)
			return pyref_exc(ref, "harness str result");
		it->kind = RNSC_RW_STR;
		it->len = (size_t)n;
		if ((offs[res->n] = stash(res, s, (size_t)n)) < 0)
			return RNSC_ERR_NOMEM;
	} else {
		rnsc_log(ref->ctx, RNSC_LOG_ERROR, WHO, "harness returned an unexpected %s",
			 Py_TYPE(o)->tp_name);
		return RNSC_ERR_PYTHON;
	}
	res->n++;
	return 0;
}

static int convert(rnsc_pyref *ref, rnsc_refwire_res *res, PyObject *out)
{
	long offs[RNSC_REFWIRE_MAX_ITEMS];
	int rc = 0;
	if (PyUnicode_Check(out)) {
		/* a verdict: the rnsc error the reference's rejection corresponds to */
		const char *name = PyUnicode_AsUTF8(out);
		int code;
		if (name && rnsc_err_from_name(name, &code) && code < 0)
			return code;
		PyErr_Clear();
		rnsc_log(ref->ctx, RNSC_LOG_ERROR, WHO, "harness returned unknown verdict '%s'",
			 name ? name : "?");
		return RNSC_ERR_PYTHON;
	}
	if (PyTuple_Check(out) || PyList_Check(out)) {
		PyObject *seq = PySequence_Fast(out, "result");
		if (!seq)
			return pyref_exc(ref, "harness result");
		for (Py_ssize_t i = 0; rc == 0 && i < PySequence_Fast_GET_SIZE(seq); i++)
			rc = add_item(ref, res, PySequence_Fast_GET_ITEM(seq, i), offs);
		Py_DECREF(seq);
	} else {
		rc = add_item(ref, res, out, offs);
	}
	/* pointers only once the buffer stopped moving */
	for (size_t i = 0; rc == 0 && i < res->n; i++)
		if (offs[i] >= 0)
			res->item[i].p = res->buf + offs[i];
	return rc;
}

int rnsc_refwire_call(rnsc_pyref *ref, rnsc_refwire_res *res, const char *fn, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = rnsc_refwire_vcall(ref, res, fn, fmt, ap);
	va_end(ap);
	return rc;
}

int rnsc_refwire_vcall(rnsc_pyref *ref, rnsc_refwire_res *res, const char *fn, const char *fmt,
		       va_list ap)
{
	if (!res)
		return RNSC_ERR_INVAL;
	memset(res, 0, sizeof(*res));
	if (!ref || !fn || !fmt)
		return RNSC_ERR_INVAL;
	pyref_gil st = pyref_enter(ref);
	int rc;
	PyObject *mod = wire_module(ref);
	if (!mod) {
		rc = RNSC_ERR_NOREF;
		goto out;
	}
	va_list aq;
	va_copy(aq, ap);
	PyObject *args = build_args(fmt, aq);
	va_end(aq);
	if (!args) {
		rc = pyref_exc(ref, fn);
		goto out;
	}
	PyObject *f = PyObject_GetAttrString(mod, fn);
	PyObject *out = f ? PyObject_Call(f, args, NULL) : NULL;
	Py_XDECREF(f);
	Py_DECREF(args);
	if (!out) {
		char what[96];
		snprintf(what, sizeof(what), MODULE ".%s", fn);
		rc = pyref_exc(ref, what);
		goto out;
	}
	rc = convert(ref, res, out);
	Py_DECREF(out);
out:
	pyref_leave(st);
	return rc;
}

void rnsc_refwire_res_free(rnsc_refwire_res *res)
{
	if (!res)
		return;
	free(res->buf);
	memset(res, 0, sizeof(*res));
}
