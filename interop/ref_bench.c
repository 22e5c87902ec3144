/* SPDX-License-Identifier: MIT */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "ref_bench.h"

int rnsc_pyref_bench(rnsc_pyref *ref, const char *op, size_t size, double seconds,
		     double *ops_per_s)
{
	(void)ref; /* holding a ref guarantees the interpreter is up */
	int rc = RNSC_ERR_PYTHON;
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *mod = PyImport_ImportModule("rnsc_refbench");
	PyObject *res = NULL;
	if (mod)
		res = PyObject_CallMethod(mod, "bench", "snd", op, (Py_ssize_t)size, seconds);
	if (res == Py_None) {
		rc = RNSC_ERR_NOTFOUND;
	} else if (res && PyFloat_Check(res)) {
		*ops_per_s = PyFloat_AsDouble(res);
		rc = 0;
	}
	if (PyErr_Occurred())
		PyErr_Print();
	Py_XDECREF(res);
	Py_XDECREF(mod);
	PyGILState_Release(g);
	return rc;
}
