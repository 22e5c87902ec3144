/* SPDX-License-Identifier: MIT */
/*
 * Embedding CPython and reaching the reference through interop/python/rnsc_refharness.py.
 *
 * Process-wide state (one interpreter per process) is guarded by g_lock for start-up and the
 * handle count, and by the GIL for everything that touches Python objects.
 */
#include "pyref_internal.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WHO "pyref"
#define HARNESS "rnsc_refharness"
#define PIN_PREFIX "rns=="

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned g_handles;           /* open rnsc_pyref handles (g_lock) */
static int g_started;                /* interpreter initialised or joined (g_lock) */
static PyObject *g_harness;          /* the imported harness module (GIL) */
static char g_version[32];           /* RNS.__version__ once verified (g_lock) */
static rnsc_ctx *g_log_ctx;          /* where harness log lines go right now (GIL) */
static struct rnsc_pyref *g_swapper; /* the handle whose swap is installed (GIL) */

/* ---- GIL and log routing ------------------------------------------------------------------ */

pyref_gil pyref_enter(rnsc_pyref *ref)
{
	pyref_gil st;
	st.gil = PyGILState_Ensure();
	st.prev_log_ctx = g_log_ctx;
	g_log_ctx = ref ? ref->ctx : g_log_ctx;
	return st;
}

void pyref_leave(pyref_gil st)
{
	g_log_ctx = st.prev_log_ctx;
	PyGILState_Release(st.gil);
}

/* _rnsc_pyref.log(level, text): the harness's only way to say something. */
static PyObject *py_host_log(PyObject *self, PyObject *args)
{
	int level;
	const char *text;
	(void)self;
	if (!PyArg_ParseTuple(args, "is", &level, &text))
		return NULL;
	if (g_log_ctx)
		rnsc_log(g_log_ctx, level, "reference", "%s", text);
	Py_RETURN_NONE;
}

static PyMethodDef host_methods[] = {
	{"log", py_host_log, METH_VARARGS, "Log one line through the rnsc context."},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef host_module = {
	PyModuleDef_HEAD_INIT,
	"_rnsc_pyref",
	"rnsc host upcalls for the reference harness",
	-1,
	host_methods,
	NULL,
	NULL,
	NULL,
	NULL,
};

/* ---- exceptions ------------------------------------------------------------------------- */

static void log_exception_at(rnsc_ctx *ctx, int level, const char *what)
{
	PyObject *type = NULL, *value = NULL, *tb = NULL;
	PyErr_Fetch(&type, &value, &tb);
	if (!type) {
		rnsc_log(ctx, level, WHO, "%s failed without a Python exception", what);
		return;
	}
	PyErr_NormalizeException(&type, &value, &tb);
	if (tb && value)
		PyException_SetTraceback(value, tb);

	int logged = 0;
	PyObject *mod = PyImport_ImportModule("traceback");
	PyObject *lines = mod ? PyObject_CallMethod(mod, "format_exception", "OOO", type,
						    value ? value : Py_None, tb ? tb : Py_None)
			      : NULL;
	if (lines && PyList_Check(lines)) {
		rnsc_log(ctx, level, WHO, "%s raised a Python exception:", what);
		for (Py_ssize_t i = 0; i < PyList_GET_SIZE(lines); i++) {
			const char *chunk = PyUnicode_AsUTF8(PyList_GET_ITEM(lines, i));
			if (!chunk)
				break;
			/* one log line per text line; chunks hold several */
			while (*chunk) {
				size_t n = strcspn(chunk, "\n");
				rnsc_log(ctx, level, WHO, "  %.*s", (int)n, chunk);
				chunk += n + (chunk[n] == '\n');
			}
		}
		logged = 1;
	}
	Py_XDECREF(lines);
	Py_XDECREF(mod);
	PyErr_Clear(); /* whatever formatting raised must not leak into the next call */
	if (!logged) {
		PyObject *s = value ? PyObject_Str(value) : NULL;
		const char *txt = s ? PyUnicode_AsUTF8(s) : NULL;
		rnsc_log(ctx, level, WHO, "%s raised a Python exception: %s", what,
			 txt ? txt : "(unprintable)");
		Py_XDECREF(s);
		PyErr_Clear();
	}
	Py_XDECREF(type);
	Py_XDECREF(value);
	Py_XDECREF(tb);
}

int pyref_exc(rnsc_pyref *ref, const char *what)
{
	log_exception_at(ref ? ref->ctx : g_log_ctx, RNSC_LOG_ERROR, what);
	return RNSC_ERR_PYTHON;
}

PyObject *pyref_call_args(rnsc_pyref *ref, const char *fn, PyObject *args)
{
	if (!g_harness) {
		rnsc_log(ref->ctx, RNSC_LOG_ERROR, WHO, "reference harness is not loaded");
		return NULL;
	}
	PyObject *res = NULL;
	PyObject *f = PyObject_GetAttrString(g_harness, fn);
	if (f) {
		res = PyObject_Call(f, args, NULL);
		Py_DECREF(f);
	}
	if (!res) {
		char what[96];
		snprintf(what, sizeof(what), HARNESS ".%s", fn);
		pyref_exc(ref, what);
	}
	return res;
}

PyObject *pyref_call(rnsc_pyref *ref, const char *fn, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	PyObject *args = Py_VaBuildValue(fmt, ap);
	va_end(ap);
	if (!args || !PyTuple_Check(args)) {
		Py_XDECREF(args);
		pyref_exc(ref, fn);
		return NULL;
	}
	PyObject *res = pyref_call_args(ref, fn, args);
	Py_DECREF(args);
	return res;
}

int pyref_result(rnsc_pyref *ref, const char *fn, PyObject *res, uint8_t *out, size_t cap,
		 size_t exact)
{
	int rc;
	if (!res)
		return RNSC_ERR_PYTHON;
	if (res == Py_None) {
		rc = 0;
	} else if (PyBytes_Check(res)) {
		size_t n = (size_t)PyBytes_GET_SIZE(res);
		if (exact && n != exact) {
			rnsc_log(ref->ctx, RNSC_LOG_ERROR, WHO,
				 "%s returned %zu bytes where %zu were expected", fn, n, exact);
			rc = RNSC_ERR_PYTHON;
		} else if (n > cap || n > INT_MAX) {
			rc = RNSC_ERR_BUFSIZE;
		} else {
			if (n)
				memcpy(out, PyBytes_AS_STRING(res), n);
			rc = (int)n;
		}
	} else if (PyUnicode_Check(res)) {
		const char *name = PyUnicode_AsUTF8(res);
		int code;
		if (name && rnsc_err_from_name(name, &code) && code < 0) {
			rc = code;
		} else {
			PyErr_Clear();
			rnsc_log(ref->ctx, RNSC_LOG_ERROR, WHO, "%s returned unknown verdict '%s'",
				 fn, name ? name : "?");
			rc = RNSC_ERR_PYTHON;
		}
	} else {
		rnsc_log(ref->ctx, RNSC_LOG_ERROR, WHO, "%s returned an unexpected %s", fn,
			 Py_TYPE(res)->tp_name);
		rc = RNSC_ERR_PYTHON;
	}
	Py_DECREF(res);
	return rc;
}

/* ---- start-up ----------------------------------------------------------------------------- */

/* Signals are the host's. install_signal_handlers = 0 keeps Py_Initialize off them, but
 * importing the `signal` module (RNS does) still installs Python's SIGINT handler, which would
 * turn the host's Ctrl-C into a flag only Python code ever looks at. So the dispositions are
 * saved before the interpreter starts and put back once the reference is imported. */
static const int host_signals[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGPIPE,
				   SIGXFSZ, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD};
#define N_HOST_SIGNALS (sizeof(host_signals) / sizeof(host_signals[0]))

static void save_signals(struct sigaction *saved)
{
	for (size_t i = 0; i < N_HOST_SIGNALS; i++)
		sigaction(host_signals[i], NULL, &saved[i]);
}

static void restore_signals(const struct sigaction *saved)
{
	for (size_t i = 0; i < N_HOST_SIGNALS; i++)
		sigaction(host_signals[i], &saved[i], NULL);
}

static void say_install(rnsc_ctx *ctx, const char *venv)
{
	rnsc_log(ctx, RNSC_LOG_ERROR, WHO,
		 "the pinned reference is not available: run `make venv` in the build directory "
		 "(it creates %s from the interpreter whose libpython rnsc embeds and installs "
		 "interop/requirements.txt, and the venv for each interop/requirements-X.Y.Z.txt), "
		 "or point RNSC_VENV at such a venv",
		 venv ? venv : "$RNSC_VENV");
}

/* The pins live in interop/: requirements.txt ("rns==X.Y.Z") holds the baseline release,
 * requirements-X.Y.Z.txt each further supported one. Reads the pin of one file (version NULL:
 * the baseline); RNSC_ERR_NOENT, unlogged, when a further release's file is absent. */
static int read_pin(rnsc_ctx *ctx, const char *srcdir, const char *version, char *pin, size_t cap)
{
	char path[PATH_MAX];
	if (version)
		snprintf(path, sizeof(path), "%s/interop/requirements-%s.txt", srcdir, version);
	else
		snprintf(path, sizeof(path), "%s/interop/requirements.txt", srcdir);
	FILE *f = fopen(path, "r");
	if (!f) {
		if (version && errno == ENOENT)
			return RNSC_ERR_NOENT;
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "cannot read the reference pin %s: %s", path,
			 strerror(errno));
		return RNSC_ERR_NOREF;
	}
	char line[256];
	int rc = RNSC_ERR_NOREF;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, PIN_PREFIX, strlen(PIN_PREFIX)) != 0)
			continue;
		const char *v = line + strlen(PIN_PREFIX);
		size_t n = strcspn(v, " \t\r\n#;");
		if (n == 0 || n >= cap)
			break;
		memcpy(pin, v, n);
		pin[n] = '\0';
		rc = 0;
		break;
	}
	fclose(f);
	if (rc)
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "%s holds no '" PIN_PREFIX "<version>' line",
			 path);
	return rc;
}

/* 1 when version is the baseline or has its own pin file that pins exactly it. */
static int is_pinned(rnsc_ctx *ctx, const char *srcdir, const char *base, const char *version)
{
	if (strcmp(version, base) == 0)
		return 1;
	/* only a plain release number names a file (no path parts) */
	size_t n = strlen(version);
	if (n == 0 || n >= 32 || strspn(version, "0123456789.") != n)
		return 0;
	char pin[32];
	return read_pin(ctx, srcdir, version, pin, sizeof(pin)) == 0 && strcmp(pin, version) == 0;
}

static int start_interpreter(rnsc_ctx *ctx, const char *venv)
{
	if (Py_IsInitialized()) {
		/* A host that already runs Python (rnsc loaded into a Python process): join it;
		 * its path set-up is its own business, the import checks below still apply. */
		rnsc_log(ctx, RNSC_LOG_INFO, WHO, "joining the already running interpreter");
		return 0;
	}
	char exe[PATH_MAX];
	snprintf(exe, sizeof(exe), "%s/bin/python3", venv);

	PyConfig config;
	/* Isolated: no PYTHON* environment, no user site, no cwd on sys.path, no argv parsing.
	 * program_name and executable point into the venv, so the path computation finds its
	 * pyvenv.cfg and the site module adds the venv's site-packages. */
	PyConfig_InitIsolatedConfig(&config);
	config.install_signal_handlers = 0; /* SIGINT stays the host's */
	config.write_bytecode = 0;          /* never write __pycache__ into the source tree */
	config.site_import = 1;
	config.parse_argv = 0;
	PyStatus st = PyConfig_SetBytesString(&config, &config.program_name, exe);
	if (!PyStatus_Exception(st))
		st = PyConfig_SetBytesString(&config, &config.executable, exe);
	if (!PyStatus_Exception(st))
		st = Py_InitializeFromConfig(&config);
	PyConfig_Clear(&config);
	if (PyStatus_Exception(st)) {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "cannot start the embedded interpreter: %s%s%s",
			 st.func ? st.func : "", st.func ? ": " : "", st.err_msg ? st.err_msg : "");
		return RNSC_ERR_NOREF;
	}
	/* Give the GIL away: every later call takes it with PyGILState_Ensure. */
	PyEval_SaveThread();
	return 0;
}

/* GIL held. Imports the harness and RNS and checks that RNS is the pinned version, taken from
 * the venv. Fills g_version. */
static int load_reference(rnsc_ctx *ctx, const char *venv, const char *srcdir, const char *pin,
			  const char *want)
{
	int rc = RNSC_ERR_NOREF;
	PyObject *host = NULL, *path = NULL, *dir = NULL, *mod = NULL, *log = NULL, *info = NULL;
	char harness_dir[PATH_MAX], real_venv[PATH_MAX];

	host = PyModule_Create(&host_module);
	if (!host || PyDict_SetItemString(PyImport_GetModuleDict(), "_rnsc_pyref", host) < 0)
		goto py_fail;
	snprintf(harness_dir, sizeof(harness_dir), "%s/interop/python", srcdir);
	path = PySys_GetObject("path"); /* borrowed */
	dir = PyUnicode_DecodeFSDefault(harness_dir);
	if (!path || !dir)
		goto py_fail;
	int present = PySequence_Contains(path, dir);
	if (present < 0 || (!present && PyList_Insert(path, 0, dir) < 0))
		goto py_fail;
	mod = PyImport_ImportModule(HARNESS);
	if (!mod) {
		log_exception_at(ctx, RNSC_LOG_ERROR, "import " HARNESS);
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO,
			 "the reference harness is missing from %s (set RNSC_SRCDIR to the source "
			 "tree)",
			 harness_dir);
		goto out;
	}
	log = PyObject_GetAttrString(host, "log");
	if (!log)
		goto py_fail;
	info = PyObject_CallMethod(mod, "setup", "O", log);
	if (!info) {
		if (PyErr_ExceptionMatches(PyExc_ImportError)) {
			log_exception_at(ctx, RNSC_LOG_INFO, "import RNS");
			rnsc_log(ctx, RNSC_LOG_ERROR, WHO,
				 "`import RNS` failed in the embedded interpreter (venv %s)", venv);
			say_install(ctx, venv);
			goto out;
		}
		goto py_fail;
	}
	const char *version = NULL, *file = NULL, *prefix = NULL, *provider = NULL;
	if (!PyArg_ParseTuple(info, "ssss", &version, &file, &prefix, &provider))
		goto py_fail;
	if (want && strcmp(version, want) != 0) {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO,
			 "the venv %s holds rns %s but RNSC_REF_VERSION asks for %s", venv, version,
			 want);
		say_install(ctx, venv);
		goto out;
	}
	if (!want && !is_pinned(ctx, srcdir, pin, version)) {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO,
			 "the venv holds rns %s but interop/requirements.txt pins %s (and no "
			 "interop/requirements-%s.txt pins it)",
			 version, pin, version);
		say_install(ctx, venv);
		goto out;
	}
	/* The venv, and nothing else on sys.path, must have supplied RNS. */
	if (!realpath(venv, real_venv)) {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "venv %s: %s", venv, strerror(errno));
		say_install(ctx, venv);
		goto out;
	}
	size_t vl = strlen(real_venv);
	char real_file[PATH_MAX];
	if (!realpath(file, real_file) || strncmp(real_file, real_venv, vl) != 0 ||
	    real_file[vl] != '/') {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO,
			 "RNS was imported from %s (sys.prefix %s), not from the venv %s", file,
			 prefix, real_venv);
		say_install(ctx, venv);
		goto out;
	}
	snprintf(g_version, sizeof(g_version), "%s", version);
	rnsc_log(ctx, RNSC_LOG_INFO, WHO, "reference rns %s from %s (crypto: %s)", version, file,
		 provider);
	g_harness = mod;
	mod = NULL;
	rc = 0;
	goto out;

py_fail:
	log_exception_at(ctx, RNSC_LOG_ERROR, "loading the reference harness");
	say_install(ctx, venv);
out:
	Py_XDECREF(info);
	Py_XDECREF(log);
	Py_XDECREF(mod);
	Py_XDECREF(dir);
	Py_XDECREF(host);
	return rc;
}

int rnsc_pyref_open(rnsc_ctx *ctx, rnsc_pyref **out)
{
	if (!ctx || !out)
		return RNSC_ERR_INVAL;
	*out = NULL;
	const char *venv = rnsc_pyref_venv_dir(), *srcdir = rnsc_pyref_src_dir();
	if (!venv || !srcdir) {
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO,
			 "RNSC_VENV and RNSC_SRCDIR are unknown (set them in the environment)");
		say_install(ctx, venv);
		return RNSC_ERR_NOREF;
	}
	rnsc_pyref *ref = rnsc_calloc(ctx, 1, sizeof(*ref));
	if (!ref)
		return RNSC_ERR_NOMEM;
	ref->ctx = ctx;

	int rc = 0;
	pthread_mutex_lock(&g_lock);
	const char *want = rnsc_pyref_ref_version();
	if (g_harness && want && strcmp(want, g_version) != 0) {
		/* one interpreter per process: the release it imported first is the one it has */
		rnsc_log(ctx, RNSC_LOG_ERROR, WHO,
			 "RNSC_REF_VERSION asks for rns %s but this process already runs rns %s",
			 want, g_version);
		rc = RNSC_ERR_NOREF;
	}
	if (!rc && !g_harness) {
		char pin[32], cfg[PATH_MAX];
		rc = read_pin(ctx, srcdir, NULL, pin, sizeof(pin));
		if (!rc && want && !is_pinned(ctx, srcdir, pin, want)) {
			rnsc_log(
				ctx, RNSC_LOG_ERROR, WHO,
				"RNSC_REF_VERSION=%s names no pinned reference: "
				"interop/requirements.txt pins %s and no interop/requirements-%s.txt "
				"exists",
				want, pin, want);
			rc = RNSC_ERR_NOREF;
		}
		snprintf(cfg, sizeof(cfg), "%s/pyvenv.cfg", venv);
		/* Without the venv the interpreter would come up on the system prefix and could
		 * import some other RNS; refuse before starting anything. */
		if (!rc && !g_started && access(cfg, R_OK) != 0) {
			rnsc_log(ctx, RNSC_LOG_ERROR, WHO, "no virtualenv at %s (%s missing)", venv,
				 cfg);
			say_install(ctx, venv);
			rc = RNSC_ERR_NOREF;
		}
		struct sigaction saved[N_HOST_SIGNALS];
		save_signals(saved);
		if (!rc && !g_started) {
			rc = start_interpreter(ctx, venv);
			g_started = rc == 0;
		}
		if (!rc) {
			pyref_gil st = pyref_enter(ref);
			rc = load_reference(ctx, venv, srcdir, pin, want);
			pyref_leave(st);
		}
		restore_signals(saved);
	}
	if (!rc) {
		snprintf(ref->version, sizeof(ref->version), "%s", g_version);
		g_handles++;
	}
	pthread_mutex_unlock(&g_lock);
	if (rc) {
		rnsc_free(ctx, ref);
		return rc;
	}
	*out = ref;
	return 0;
}

void rnsc_pyref_close(rnsc_pyref *ref)
{
	if (!ref)
		return;
	if (ref->swap)
		(void)rnsc_pyref_unswap_crypto(ref);
	pthread_mutex_lock(&g_lock);
	g_handles--;
	pthread_mutex_unlock(&g_lock);
	/* A log line arriving later must not reach a context that may be gone. */
	pyref_gil st = pyref_enter(NULL);
	if (st.prev_log_ctx == ref->ctx)
		st.prev_log_ctx = NULL;
	pyref_leave(st);
	rnsc_free(ref->ctx, ref);
}

const char *rnsc_pyref_version(const rnsc_pyref *ref)
{
	return ref ? ref->version : NULL;
}

rnsc_ctx *rnsc_pyref_ctx(const rnsc_pyref *ref)
{
	return ref ? ref->ctx : NULL;
}

int rnsc_pyref_flush(rnsc_pyref *ref)
{
	if (!ref)
		return RNSC_ERR_INVAL;
	pyref_gil st = pyref_enter(ref);
	int rc = pyref_result(ref, "flush_output", pyref_call(ref, "flush_output", "()"), NULL, 0,
			      0);
	pyref_leave(st);
	return rc;
}

/* ---- typed wrappers ----------------------------------------------------------------------- */

/* "y#" wants Py_ssize_t lengths; NULL pointers become None through "z#"-like handling here. */
static PyObject *bytes_or_none(const uint8_t *p, size_t len)
{
	if (!p)
		Py_RETURN_NONE;
	return PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)len);
}

static PyObject *aspects_list(const char *const *aspects, size_t n)
{
	PyObject *l = PyList_New((Py_ssize_t)n);
	for (size_t i = 0; l && i < n; i++) {
		PyObject *s = PyUnicode_FromString(aspects[i]);
		if (!s) {
			Py_CLEAR(l);
			break;
		}
		PyList_SET_ITEM(l, (Py_ssize_t)i, s);
	}
	return l;
}

#define YB(p, n) (const char *)(p), (Py_ssize_t)(n)

int rnsc_pyref_identity_public(rnsc_pyref *ref, uint8_t pub[64], uint8_t hash[16],
			       const uint8_t *prv, size_t prv_len)
{
	pyref_gil st = pyref_enter(ref);
	int rc = RNSC_ERR_PYTHON;
	PyObject *res = pyref_call(ref, "id_from_private", "(y#)", YB(prv, prv_len));
	if (res && PyTuple_Check(res)) {
		PyObject *p = PyTuple_GetItem(res, 0), *h = PyTuple_GetItem(res, 1);
		Py_XINCREF(p);
		Py_XINCREF(h);
		rc = pyref_result(ref, "id_from_private", p, pub, 64, 64);
		int rc2 = pyref_result(ref, "id_from_private", h, hash, 16, 16);
		rc = rc < 0 ? rc : rc2 < 0 ? rc2 : 0;
		Py_DECREF(res);
	} else {
		rc = pyref_result(ref, "id_from_private", res, NULL, 0, 0);
		if (rc == 0)
			rc = RNSC_ERR_PYTHON;
	}
	pyref_leave(st);
	return rc;
}

int rnsc_pyref_identity_hash(rnsc_pyref *ref, uint8_t hash[16], const uint8_t *pub, size_t pub_len)
{
	pyref_gil st = pyref_enter(ref);
	PyObject *res = pyref_call(ref, "id_hash_from_public", "(y#)", YB(pub, pub_len));
	int rc = pyref_result(ref, "id_hash_from_public", res, hash, 16, 16);
	pyref_leave(st);
	return rc < 0 ? rc : 0;
}

int rnsc_pyref_identity_encrypt(rnsc_pyref *ref, uint8_t *out, size_t cap, const uint8_t *pub,
				size_t pub_len, const uint8_t *pt, size_t len,
				const uint8_t *ratchet_pub, size_t ratchet_len,
				const uint8_t *eph_priv, const uint8_t *iv)
{
	pyref_gil st = pyref_enter(ref);
	PyObject *res = pyref_call(ref, "id_encrypt", "(y#y#NNN)", YB(pub, pub_len), YB(pt, len),
				   bytes_or_none(ratchet_pub, ratchet_len),
				   bytes_or_none(eph_priv, 32), bytes_or_none(iv, 16));
	int rc = pyref_result(ref, "id_encrypt", res, out, cap, 0);
	pyref_leave(st);
	return rc;
}

int rnsc_pyref_identity_decrypt(rnsc_pyref *ref, uint8_t *out, size_t cap, const uint8_t *prv,
				size_t prv_len, const uint8_t *token, size_t len,
				const uint8_t (*ratchets)[32], size_t n_ratchets,
				int enforce_ratchets, int *used_ratchet)
{
	if (used_ratchet)
		*used_ratchet = -1;
	pyref_gil st = pyref_enter(ref);
	int rc;
	PyObject *res = pyref_call(ref, "id_decrypt", "(y#y#Ni)", YB(prv, prv_len), YB(token, len),
				   bytes_or_none(ratchets ? ratchets[0] : NULL, n_ratchets * 32),
				   enforce_ratchets ? 1 : 0);
	if (res && PyTuple_Check(res)) {
		PyObject *pt = PyTuple_GetItem(res, 0);
		long used = PyLong_AsLong(PyTuple_GetItem(res, 1));
		Py_XINCREF(pt);
		rc = pyref_result(ref, "id_decrypt", pt, out, cap, 0);
		if (used_ratchet && rc >= 0)
			*used_ratchet = (int)used;
		Py_DECREF(res);
	} else {
		rc = pyref_result(ref, "id_decrypt", res, NULL, 0, 0);
		if (rc == 0)
			rc = RNSC_ERR_PYTHON;
	}
	pyref_leave(st);
	return rc;
}

int rnsc_pyref_identity_sign(rnsc_pyref *ref, uint8_t sig[64], const uint8_t *prv, size_t prv_len,
			     const uint8_t *msg, size_t len)
{
	pyref_gil st = pyref_enter(ref);
	PyObject *res = pyref_call(ref, "id_sign", "(y#y#)", YB(prv, prv_len), YB(msg, len));
	int rc = pyref_result(ref, "id_sign", res, sig, 64, 64);
	pyref_leave(st);
	return rc;
}

int rnsc_pyref_identity_validate(rnsc_pyref *ref, const uint8_t *pub, size_t pub_len,
				 const uint8_t *sig, size_t sig_len, const uint8_t *msg, size_t len)
{
	pyref_gil st = pyref_enter(ref);
	PyObject *res = pyref_call(ref, "id_validate", "(y#y#y#)", YB(pub, pub_len),
				   YB(sig, sig_len), YB(msg, len));
	int rc = pyref_result(ref, "id_validate", res, NULL, 0, 0);
	pyref_leave(st);
	return rc;
}

int rnsc_pyref_identity_to_file(rnsc_pyref *ref, const uint8_t prv[64], const char *path)
{
	pyref_gil st = pyref_enter(ref);
	PyObject *res = pyref_call(ref, "id_to_file", "(y#s)", YB(prv, 64), path);
	int rc = pyref_result(ref, "id_to_file", res, NULL, 0, 0);
	pyref_leave(st);
	return rc;
}

int rnsc_pyref_identity_from_file(rnsc_pyref *ref, uint8_t prv[64], const char *path)
{
	pyref_gil st = pyref_enter(ref);
	PyObject *res = pyref_call(ref, "id_from_file", "(s)", path);
	int rc = pyref_result(ref, "id_from_file", res, prv, 64, 64);
	pyref_leave(st);
	return rc < 0 ? rc : 0;
}

static int bytes_in_bytes_out(rnsc_pyref *ref, const char *fn, const uint8_t *p, size_t len,
			      uint8_t *out, size_t n)
{
	pyref_gil st = pyref_enter(ref);
	PyObject *res = pyref_call(ref, fn, "(y#)", YB(p, len));
	int rc = pyref_result(ref, fn, res, out, n, n);
	pyref_leave(st);
	return rc < 0 ? rc : 0;
}

int rnsc_pyref_full_hash(rnsc_pyref *ref, uint8_t out[32], const uint8_t *p, size_t len)
{
	return bytes_in_bytes_out(ref, "full_hash", p, len, out, 32);
}

int rnsc_pyref_truncated_hash(rnsc_pyref *ref, uint8_t out[16], const uint8_t *p, size_t len)
{
	return bytes_in_bytes_out(ref, "truncated_hash", p, len, out, 16);
}

int rnsc_pyref_ratchet_public(rnsc_pyref *ref, uint8_t pub[32], const uint8_t priv[32])
{
	return bytes_in_bytes_out(ref, "ratchet_public", priv, 32, pub, 32);
}

int rnsc_pyref_ratchet_id(rnsc_pyref *ref, uint8_t out[10], const uint8_t pub[32])
{
	return bytes_in_bytes_out(ref, "ratchet_id", pub, 32, out, 10);
}

int rnsc_pyref_expand_name(rnsc_pyref *ref, char *out, size_t cap, const uint8_t *identity_hash,
			   const char *app_name, const char *const *aspects, size_t n_aspects)
{
	if (!out || cap == 0)
		return RNSC_ERR_BUFSIZE;
	pyref_gil st = pyref_enter(ref);
	PyObject *res = pyref_call(ref, "expand_name", "(NsN)", bytes_or_none(identity_hash, 16),
				   app_name, aspects_list(aspects, n_aspects));
	/* leave room for the terminating NUL */
	int rc = pyref_result(ref, "expand_name", res, (uint8_t *)out, cap - 1, 0);
	if (rc >= 0)
		out[rc] = '\0';
	pyref_leave(st);
	return rc;
}

int rnsc_pyref_name_hash(rnsc_pyref *ref, uint8_t out[10], const char *app_name,
			 const char *const *aspects, size_t n_aspects)
{
	pyref_gil st = pyref_enter(ref);
	PyObject *res =
		pyref_call(ref, "name_hash", "(sN)", app_name, aspects_list(aspects, n_aspects));
	int rc = pyref_result(ref, "name_hash", res, out, 10, 10);
	pyref_leave(st);
	return rc < 0 ? rc : 0;
}

int rnsc_pyref_destination_hash(rnsc_pyref *ref, uint8_t out[16], const uint8_t *identity_hash,
				const char *app_name, const char *const *aspects, size_t n_aspects)
{
	pyref_gil st = pyref_enter(ref);
	PyObject *res = pyref_call(ref, "dest_hash", "(NsN)", bytes_or_none(identity_hash, 16),
				   app_name, aspects_list(aspects, n_aspects));
	int rc = pyref_result(ref, "dest_hash", res, out, 16, 16);
	pyref_leave(st);
	return rc < 0 ? rc : 0;
}

int rnsc_pyref_destination_hash_from_name(rnsc_pyref *ref, uint8_t out[16],
					  const uint8_t *identity_hash, const char *full_name)
{
	pyref_gil st = pyref_enter(ref);
	PyObject *res = pyref_call(ref, "dest_hash_from_name", "(Ns)",
				   bytes_or_none(identity_hash, 16), full_name);
	int rc = pyref_result(ref, "dest_hash_from_name", res, out, 16, 16);
	pyref_leave(st);
	return rc < 0 ? rc : 0;
}

int rnsc_pyref_link_id(rnsc_pyref *ref, uint8_t out[16], const uint8_t *raw, size_t len)
{
	return bytes_in_bytes_out(ref, "link_id", raw, len, out, 16);
}

int rnsc_pyref_group_encrypt(rnsc_pyref *ref, uint8_t *out, size_t cap, const uint8_t *key,
			     size_t key_len, const uint8_t *iv, const uint8_t *pt, size_t len)
{
	pyref_gil st = pyref_enter(ref);
	PyObject *res = pyref_call(ref, "group_encrypt", "(y#y#N)", YB(key, key_len), YB(pt, len),
				   bytes_or_none(iv, 16));
	int rc = pyref_result(ref, "group_encrypt", res, out, cap, 0);
	pyref_leave(st);
	return rc;
}

int rnsc_pyref_group_decrypt(rnsc_pyref *ref, uint8_t *out, size_t cap, const uint8_t *key,
			     size_t key_len, const uint8_t *token, size_t len)
{
	pyref_gil st = pyref_enter(ref);
	PyObject *res =
		pyref_call(ref, "group_decrypt", "(y#y#)", YB(key, key_len), YB(token, len));
	int rc = pyref_result(ref, "group_decrypt", res, out, cap, 0);
	pyref_leave(st);
	return rc;
}

/* ---- the ffi swap ------------------------------------------------------------------------- */

int rnsc_pyref_swap_crypto(rnsc_pyref *ref, rnsc_ctx *crypto_ctx)
{
	if (!ref || !crypto_ctx)
		return RNSC_ERR_INVAL;
	pyref_gil st = pyref_enter(ref);
	int rc = 0;
	if (g_swapper) {
		/* a usage error the caller sees in the code; not worth an error line */
		rnsc_log(ref->ctx, RNSC_LOG_DEBUG, WHO,
			 "a crypto swap is already installed in the reference");
		rc = RNSC_ERR_STATE;
		goto out;
	}
	struct rnsc_ffi_binding *b = rnsc_ffi_binding_new(crypto_ctx);
	if (!b) {
		rc = RNSC_ERR_NOMEM;
		goto out;
	}
	rc = rnsc_ffi_binding_check(b);
	if (rc) {
		rnsc_log(ref->ctx, RNSC_LOG_ERROR, WHO,
			 "the ffi entry points failed their libffi check: %s", rnsc_strerror(rc));
		rnsc_ffi_binding_del(b);
		goto out;
	}
	PyObject *table = rnsc_ffi_binding_table();
	if (!table) {
		rnsc_ffi_binding_del(b);
		rc = pyref_exc(ref, "building the ffi table");
		goto out;
	}
	PyObject *res = pyref_call(ref, "swap_install", "(NN)", PyLong_FromVoidPtr(b), table);
	if (!res) {
		rnsc_ffi_binding_del(b);
		rc = RNSC_ERR_PYTHON;
		goto out;
	}
	rnsc_log(ref->ctx, RNSC_LOG_INFO, WHO,
		 "rnsc crypto swapped into the reference (%ld bindings)", PyLong_AsLong(res));
	PyErr_Clear();
	Py_DECREF(res);
	ref->swap = b;
	g_swapper = ref;
out:
	pyref_leave(st);
	return rc;
}

int rnsc_pyref_unswap_crypto(rnsc_pyref *ref)
{
	if (!ref)
		return RNSC_ERR_INVAL;
	if (!ref->swap)
		return RNSC_ERR_STATE;
	pyref_gil st = pyref_enter(ref);
	PyObject *res = pyref_call(ref, "swap_remove", "()");
	int rc = pyref_result(ref, "swap_remove", res, NULL, 0, 0);
	/* Even if restoring failed, the binding must not be freed under live proxies: only
	 * drop it once Python no longer refers to it. */
	if (rc == 0) {
		rnsc_ffi_binding_del(ref->swap);
		ref->swap = NULL;
		g_swapper = NULL;
	}
	pyref_leave(st);
	return rc;
}

unsigned long rnsc_pyref_swap_calls(const rnsc_pyref *ref, enum rnsc_prim prim)
{
	return ref && ref->swap ? rnsc_ffi_binding_calls(ref->swap, prim) : 0;
}
