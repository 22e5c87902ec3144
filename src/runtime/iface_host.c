/* SPDX-License-Identifier: MIT */
#include "iface_host.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct rnsc_iface_watch {
	rnsc_iface *owner;
	rnsc_watch *w;
	rnsc_iface_io_fn fn;
	void *ud;
	struct rnsc_iface_watch *next;
};

struct rnsc_iface_timer {
	rnsc_iface *owner;
	rnsc_timer *t; /* NULL while stopped */
	rnsc_iface_timer_fn fn;
	void *ud;
	uint64_t period;
	int in_cb;
	int dead; /* timer_del from inside its own callback: freed when it returns */
	struct rnsc_iface_timer *next;
};

struct rnsc_iface {
	rnsc_iface_host *h;
	char *name;
	char *type;
	const rnsc_plugin_rec *rec;
	const rnsc_iface_ops *ops;
	void *handle; /* NULL until open() succeeded */
	rnsc_iface_host_api api;
	rnsc_iface *parent;
	int online;
	int closing;
	uint64_t drops[RNSC_IFACE_DROP_COUNT];
	uint64_t delivered;
	struct rnsc_iface_watch *watches;
	struct rnsc_iface_timer *timers;
	void *user;
};

struct iface_retry {
	rnsc_iface_host *h;
	const rnsc_config_section *s;
	char *name, *type;
	unsigned period_ms;
	unsigned attempts;
	rnsc_timer *t;
	struct iface_retry *next;
};

struct rnsc_iface_host {
	rnsc_ctx *ctx;
	rnsc_plugin_host *plugins;
	rnsc_loop *loop;
	rnsc_iface **v;
	size_t n, cap;
	rnsc_iface_rx_fn rx;
	void *rx_ud;
	rnsc_iface_event_fn ev;
	void *ev_ud;
	/* >0 while a plugin, rx or event callback is on the stack: closes are deferred then,
	 * so no plugin ever returns into a freed interface. */
	unsigned depth;
	rnsc_timer *reap;
	struct iface_retry *retries;
	rnsc_iface_prepare_fn prep;
	rnsc_iface_reopened_fn reopened;
	void *retry_ud;
};

static char *dup_str(rnsc_ctx *ctx, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = rnsc_alloc(ctx, n);
	if (d)
		memcpy(d, s, n);
	return d;
}

static void emit(rnsc_iface *i, int event)
{
	rnsc_iface_host *h = i->h;
	if (!h->ev)
		return;
	h->depth++;
	h->ev(h->ev_ud, i, event);
	h->depth--;
}

/* ---- upcalls ------------------------------------------------------------------------- */

static void watch_cb(rnsc_loop *loop, rnsc_watch *w, int fd, unsigned events, void *ud)
{
	(void)loop;
	(void)w;
	struct rnsc_iface_watch *r = ud;
	rnsc_iface_host *h = r->owner->h;
	h->depth++;
	r->fn(r->ud, fd, events); /* may free r through watch_remove */
	h->depth--;
}

static int up_watch_add(void *hctx, int fd, unsigned events, rnsc_iface_io_fn fn, void *ud,
			rnsc_iface_watch **out)
{
	rnsc_iface *i = hctx;
	if (!fn || !out)
		return RNSC_ERR_INVAL;
	struct rnsc_iface_watch *r = rnsc_calloc(i->h->ctx, 1, sizeof(*r));
	if (!r)
		return RNSC_ERR_NOMEM;
	r->owner = i;
	r->fn = fn;
	r->ud = ud;
	int rc = rnsc_loop_watch_add(i->h->loop, fd, events, watch_cb, r, &r->w);
	if (rc) {
		rnsc_free(i->h->ctx, r);
		return rc;
	}
	r->next = i->watches;
	i->watches = r;
	*out = r;
	return 0;
}

static int up_watch_modify(void *hctx, rnsc_iface_watch *w, unsigned events)
{
	rnsc_iface *i = hctx;
	if (!w)
		return RNSC_ERR_INVAL;
	return rnsc_loop_watch_modify(i->h->loop, w->w, events);
}

static void up_watch_remove(void *hctx, rnsc_iface_watch *w)
{
	rnsc_iface *i = hctx;
	if (!w)
		return;
	for (struct rnsc_iface_watch **p = &i->watches; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	rnsc_loop_watch_remove(i->h->loop, w->w);
	rnsc_free(i->h->ctx, w);
}

static void timer_unlink_free(rnsc_iface *i, struct rnsc_iface_timer *t)
{
	for (struct rnsc_iface_timer **p = &i->timers; *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			break;
		}
	rnsc_free(i->h->ctx, t);
}

static void timer_cb(rnsc_loop *loop, rnsc_timer *lt, void *ud)
{
	(void)loop;
	(void)lt;
	struct rnsc_iface_timer *t = ud;
	rnsc_iface *i = t->owner;
	/* The loop frees a fired one-shot when we return; forget it first so a restart from
	 * inside the callback arms a fresh one. */
	if (t->period == 0)
		t->t = NULL;
	t->in_cb = 1;
	i->h->depth++;
	t->fn(t->ud);
	i->h->depth--;
	t->in_cb = 0;
	if (t->dead)
		timer_unlink_free(i, t);
}

static int up_timer_new(void *hctx, rnsc_iface_timer_fn fn, void *ud, rnsc_iface_timer **out)
{
	rnsc_iface *i = hctx;
	if (!fn || !out)
		return RNSC_ERR_INVAL;
	struct rnsc_iface_timer *t = rnsc_calloc(i->h->ctx, 1, sizeof(*t));
	if (!t)
		return RNSC_ERR_NOMEM;
	t->owner = i;
	t->fn = fn;
	t->ud = ud;
	t->next = i->timers;
	i->timers = t;
	*out = t;
	return 0;
}

static void up_timer_stop(void *hctx, rnsc_iface_timer *t)
{
	rnsc_iface *i = hctx;
	if (!t || !t->t)
		return;
	rnsc_loop_timer_cancel(i->h->loop, t->t);
	t->t = NULL;
}

static int up_timer_start(void *hctx, rnsc_iface_timer *t, uint64_t delay_ns, uint64_t period_ns)
{
	rnsc_iface *i = hctx;
	if (!t || t->dead)
		return RNSC_ERR_INVAL;
	up_timer_stop(hctx, t);
	t->period = period_ns;
	return rnsc_loop_timer_add(i->h->loop, delay_ns, period_ns, timer_cb, t, &t->t);
}

static void up_timer_del(void *hctx, rnsc_iface_timer *t)
{
	rnsc_iface *i = hctx;
	if (!t)
		return;
	up_timer_stop(hctx, t);
	if (t->in_cb)
		t->dead = 1;
	else
		timer_unlink_free(i, t);
}

static uint64_t up_now_ns(void *hctx)
{
	return rnsc_loop_now(((rnsc_iface *)hctx)->h->loop);
}

static void up_deliver(void *hctx, const uint8_t *frame, size_t len)
{
	rnsc_iface *i = hctx;
	rnsc_iface_host *h = i->h;
	i->delivered++;
	if (!h->rx)
		return;
	h->depth++;
	h->rx(h->rx_ud, i, frame, len, rnsc_loop_now(h->loop));
	h->depth--;
}

static void up_set_online(void *hctx, int online)
{
	rnsc_iface *i = hctx;
	online = online != 0;
	if (i->online == online)
		return;
	i->online = online;
	rnsc_log(i->h->ctx, RNSC_LOG_VERBOSE, "iface", "%s is now %s", i->name,
		 online ? "online" : "offline");
	emit(i, online ? RNSC_IFACE_ONLINE : RNSC_IFACE_OFFLINE);
}

static void up_log(void *hctx, int level, const char *msg)
{
	rnsc_iface *i = hctx;
	rnsc_log(i->h->ctx, level, i->name, "%s", msg);
}

static void up_drop(void *hctx, unsigned reason, uint64_t n)
{
	rnsc_iface *i = hctx;
	if (reason < RNSC_IFACE_DROP_COUNT)
		i->drops[reason] += n;
}

static void reap_cb(rnsc_loop *loop, rnsc_timer *t, void *ud);

static void up_request_close(void *hctx)
{
	rnsc_iface_close(hctx);
}

static int push(rnsc_iface_host *h, rnsc_iface *i)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 8;
		rnsc_iface **v = rnsc_calloc(h->ctx, cap, sizeof(*v));
		if (!v)
			return RNSC_ERR_NOMEM;
		if (h->n)
			memcpy(v, h->v, h->n * sizeof(*v));
		rnsc_free(h->ctx, h->v);
		h->v = v;
		h->cap = cap;
	}
	h->v[h->n++] = i;
	return 0;
}

static int up_spawn(void *hctx, void *child, const char *name,
		    const rnsc_iface_host_api **child_api);

static rnsc_iface *iface_alloc(rnsc_iface_host *h, const char *name, const char *type,
			       const rnsc_plugin_rec *rec)
{
	rnsc_iface *i = rnsc_calloc(h->ctx, 1, sizeof(*i));
	if (!i)
		return NULL;
	i->h = h;
	i->rec = rec;
	i->ops = rec->desc->ops;
	i->name = dup_str(h->ctx, name);
	i->type = dup_str(h->ctx, type);
	i->api = (rnsc_iface_host_api){
		.struct_size = sizeof(rnsc_iface_host_api),
		.hctx = i,
		.watch_add = up_watch_add,
		.watch_modify = up_watch_modify,
		.watch_remove = up_watch_remove,
		.timer_new = up_timer_new,
		.timer_start = up_timer_start,
		.timer_stop = up_timer_stop,
		.timer_del = up_timer_del,
		.now_ns = up_now_ns,
		.deliver = up_deliver,
		.set_online = up_set_online,
		.spawn = up_spawn,
		.request_close = up_request_close,
		.log = up_log,
		.drop = up_drop,
	};
	if (!i->name || !i->type || push(h, i)) {
		rnsc_free(h->ctx, i->name);
		rnsc_free(h->ctx, i->type);
		rnsc_free(h->ctx, i);
		return NULL;
	}
	return i;
}

static int up_spawn(void *hctx, void *child, const char *name,
		    const rnsc_iface_host_api **child_api)
{
	rnsc_iface *p = hctx;
	if (!child || !name || !child_api)
		return RNSC_ERR_INVAL;
	if (p->closing)
		return RNSC_ERR_STATE;
	rnsc_iface *c = iface_alloc(p->h, name, p->type, p->rec);
	if (!c)
		return RNSC_ERR_NOMEM;
	c->parent = p;
	c->handle = child;
	*child_api = &c->api;
	rnsc_log(p->h->ctx, RNSC_LOG_VERBOSE, "iface", "%s spawned %s", p->name, c->name);
	emit(c, RNSC_IFACE_ADDED);
	return 0;
}

/* ---- closing ------------------------------------------------------------------------- */

static void iface_release(rnsc_iface *i)
{
	rnsc_iface_host *h = i->h;
	/* Records the plugin left behind. */
	while (i->watches)
		up_watch_remove(i, i->watches);
	while (i->timers) {
		struct rnsc_iface_timer *t = i->timers;
		up_timer_stop(i, t);
		i->timers = t->next;
		rnsc_free(h->ctx, t);
	}
	for (size_t k = 0; k < h->n; k++)
		if (h->v[k] == i) {
			memmove(&h->v[k], &h->v[k + 1], (h->n - k - 1) * sizeof(h->v[0]));
			h->n--;
			break;
		}
	rnsc_free(h->ctx, i->name);
	rnsc_free(h->ctx, i->type);
	rnsc_free(h->ctx, i);
}

static void close_now(rnsc_iface *i)
{
	rnsc_iface_host *h = i->h;
	i->closing = 1;
	/* Children first: the plugin's parent state may be referenced by them. */
	for (size_t k = h->n; k-- > 0;)
		if (k < h->n && h->v[k]->parent == i) {
			close_now(h->v[k]);
			k = h->n; /* the list changed; rescan */
		}
	if (i->handle) {
		h->depth++;
		i->ops->close(i->handle);
		h->depth--;
		i->handle = NULL;
	}
	if (i->online) {
		i->online = 0;
		emit(i, RNSC_IFACE_OFFLINE);
	}
	emit(i, RNSC_IFACE_REMOVED);
	/* A server's counters outlive its connections, as the reference sums them too. */
	if (i->parent)
		for (unsigned r = 0; r < RNSC_IFACE_DROP_COUNT; r++)
			i->parent->drops[r] += i->drops[r];
	iface_release(i);
}

static void reap_cb(rnsc_loop *loop, rnsc_timer *t, void *ud)
{
	(void)loop;
	(void)t;
	rnsc_iface_host *h = ud;
	h->reap = NULL;
	for (;;) {
		rnsc_iface *victim = NULL;
		for (size_t k = 0; k < h->n && !victim; k++)
			if (h->v[k]->closing)
				victim = h->v[k];
		if (!victim)
			break;
		close_now(victim);
	}
}

void rnsc_iface_close(rnsc_iface *i)
{
	if (!i)
		return;
	rnsc_iface_host *h = i->h;
	if (h->depth == 0) {
		close_now(i);
		return;
	}
	i->closing = 1;
	if (!h->reap && rnsc_loop_timer_add(h->loop, 0, 0, reap_cb, h, &h->reap) != 0)
		rnsc_log(h->ctx, RNSC_LOG_ERROR, "iface", "cannot schedule removal of %s", i->name);
}

/* ---- host ---------------------------------------------------------------------------- */

int rnsc_iface_host_new(rnsc_ctx *ctx, rnsc_plugin_host *plugins, rnsc_loop *loop,
			rnsc_iface_host **out)
{
	if (!ctx || !plugins || !loop || !out)
		return RNSC_ERR_INVAL;
	rnsc_iface_host *h = rnsc_calloc(ctx, 1, sizeof(*h));
	if (!h)
		return RNSC_ERR_NOMEM;
	h->ctx = ctx;
	h->plugins = plugins;
	h->loop = loop;
	*out = h;
	return 0;
}

static void retry_free(struct iface_retry *r)
{
	rnsc_iface_host *h = r->h;
	for (struct iface_retry **p = &h->retries; *p; p = &(*p)->next)
		if (*p == r) {
			*p = r->next;
			break;
		}
	if (r->t)
		rnsc_loop_timer_cancel(h->loop, r->t);
	rnsc_free(h->ctx, r->name);
	rnsc_free(h->ctx, r->type);
	rnsc_free(h->ctx, r);
}

void rnsc_iface_host_del(rnsc_iface_host *h)
{
	if (!h)
		return;
	h->depth = 0;
	while (h->n) {
		rnsc_iface *top = h->v[h->n - 1];
		while (top->parent)
			top = top->parent;
		close_now(top);
	}
	if (h->reap)
		rnsc_loop_timer_cancel(h->loop, h->reap);
	while (h->retries)
		retry_free(h->retries);
	rnsc_free(h->ctx, h->v);
	rnsc_free(h->ctx, h);
}

void rnsc_iface_host_set_rx(rnsc_iface_host *h, rnsc_iface_rx_fn fn, void *ud)
{
	h->rx = fn;
	h->rx_ud = ud;
}

void rnsc_iface_host_set_event(rnsc_iface_host *h, rnsc_iface_event_fn fn, void *ud)
{
	h->ev = fn;
	h->ev_ud = ud;
}

/* ---- config view --------------------------------------------------------------------- */

typedef struct cfg_view {
	const rnsc_config_section *s;
	rnsc_config_error *err;
	int failed;
	struct cfg_view *root; /* a subsection's view: the interface's own view */
	struct cfg_view *subs; /* the interface's view: storage for its subsections' views */
	const char *type;
} cfg_view;

__attribute__((format(printf, 4, 5))) static int view_err(cfg_view *v, const char *key, int code,
							  const char *fmt, ...)
{
	char path[160], msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rnsc_config_section_path(v->s, path, sizeof(path));
	if (v->err) {
		v->err->code = code;
		v->err->line = key ? rnsc_config_option_line(v->s, key) : 0;
		if (!v->err->line)
			v->err->line = rnsc_config_section_line(v->s);
		if (key)
			snprintf(v->err->msg, sizeof(v->err->msg),
				 "%.150s option \"%.60s\": %.160s", path, key, msg);
		else
			snprintf(v->err->msg, sizeof(v->err->msg), "%.150s: %.220s", path, msg);
	}
	v->failed = 1;
	if (v->root)
		v->root->failed = 1;
	return code;
}

static int view_result(cfg_view *v, const char *key, int rc, rnsc_config_error *e)
{
	if (rc == 0 || rc == RNSC_ERR_NOTFOUND)
		return rc;
	if (!e->msg[0])
		return view_err(v, key, rc, "%s", rnsc_strerror(rc));
	/* The getters' own message already names the section and the option. */
	if (v->err) {
		*v->err = *e;
		v->err->code = rc;
	}
	v->failed = 1;
	if (v->root)
		v->root->failed = 1;
	return rc;
}

static int view_get_str(void *cctx, const char *key, const char **out)
{
	rnsc_config_error e = {0};
	return view_result(cctx, key, rnsc_config_get_str(((cfg_view *)cctx)->s, key, out, &e), &e);
}

static int view_get_int(void *cctx, const char *key, int64_t *out)
{
	rnsc_config_error e = {0};
	return view_result(cctx, key, rnsc_config_get_int(((cfg_view *)cctx)->s, key, out, &e), &e);
}

static int view_get_bool(void *cctx, const char *key, int *out)
{
	rnsc_config_error e = {0};
	return view_result(cctx, key, rnsc_config_get_bool(((cfg_view *)cctx)->s, key, out, &e),
			   &e);
}

static int view_get_float(void *cctx, const char *key, double *out)
{
	rnsc_config_error e = {0};
	return view_result(cctx, key, rnsc_config_get_float(((cfg_view *)cctx)->s, key, out, &e),
			   &e);
}

static int view_get_list(void *cctx, const char *key, const char *const **items, size_t *n)
{
	rnsc_config_error e = {0};
	return view_result(cctx, key,
			   rnsc_config_get_list(((cfg_view *)cctx)->s, key, items, n, &e), &e);
}

static int view_fail(void *cctx, const char *key, int code, const char *msg)
{
	return view_err(cctx, key, code, "%s", msg ? msg : rnsc_strerror(code));
}

static size_t view_sub_count(void *cctx)
{
	cfg_view *v = cctx;
	size_t n = v->subs ? rnsc_config_section_count(v->s) : 0;
	return n > RNSC_IFACE_SUBS_MAX ? RNSC_IFACE_SUBS_MAX : n;
}

static int view_sub_at(void *cctx, size_t i, rnsc_iface_config *out)
{
	cfg_view *v = cctx;
	if (!out || i >= view_sub_count(cctx))
		return RNSC_ERR_NOTFOUND;
	cfg_view *sv = &v->subs[i];
	*sv = (cfg_view){
		.s = rnsc_config_section_at(v->s, i), .err = v->err, .root = v, .type = v->type};
	*out = (rnsc_iface_config){
		.struct_size = sizeof(rnsc_iface_config),
		.cctx = sv,
		.name = rnsc_config_section_name(sv->s),
		.type = v->type,
		.get_str = view_get_str,
		.get_int = view_get_int,
		.get_bool = view_get_bool,
		.get_float = view_get_float,
		.fail = view_fail,
		.get_list = view_get_list,
		.sub_count = view_sub_count,
		.sub_at = view_sub_at,
	};
	return 0;
}

int rnsc_iface_host_open(rnsc_iface_host *h, const rnsc_config_section *s, const char *name,
			 const char *type, rnsc_iface **out, rnsc_config_error *err)
{
	cfg_view subs[RNSC_IFACE_SUBS_MAX];
	cfg_view v = {.s = s, .err = err, .subs = subs, .type = type};
	if (err)
		memset(err, 0, sizeof(*err));
	if (!h || !s || !name || !type)
		return RNSC_ERR_INVAL;
	if (rnsc_iface_host_find(h, name))
		return view_err(&v, NULL, RNSC_ERR_CONFIG_DUP, "an interface named \"%s\" is open",
				name);
	const rnsc_plugin_rec *rec = rnsc_plugin_host_find_iface(h->plugins, type);
	if (!rec)
		return view_err(&v, "type", RNSC_ERR_NOTFOUND,
				"no loaded interface plugin serves type \"%s\"", type);
	rnsc_iface *i = iface_alloc(h, name, type, rec);
	if (!i)
		return view_err(&v, NULL, RNSC_ERR_NOMEM, "out of memory");
	const rnsc_iface_config view = {
		.struct_size = sizeof(rnsc_iface_config),
		.cctx = &v,
		.name = name,
		.type = type,
		.get_str = view_get_str,
		.get_int = view_get_int,
		.get_bool = view_get_bool,
		.get_float = view_get_float,
		.fail = view_fail,
		.get_list = view_get_list,
		.sub_count = view_sub_count,
		.sub_at = view_sub_at,
	};
	void *handle = NULL;
	h->depth++;
	int rc = i->ops->open(rec->inst, &view, &i->api, &handle);
	h->depth--;
	if (rc != 0 || !handle) {
		if (rc == 0)
			rc = RNSC_ERR_PLUGIN_INIT;
		if (!v.failed)
			view_err(&v, NULL, rc, "plugin %s could not open it: %s", rec->desc->name,
				 rnsc_strerror(rc));
		rnsc_log(h->ctx, RNSC_LOG_ERROR, "iface", "%s", err ? err->msg : "open failed");
		/* Children cannot exist yet; drop whatever the plugin registered. */
		iface_release(i);
		return rc;
	}
	i->handle = handle;
	rnsc_log(h->ctx, RNSC_LOG_VERBOSE, "iface", "opened %s (%s) with plugin %s", name, type,
		 rec->desc->name);
	emit(i, RNSC_IFACE_ADDED);
	if (out)
		*out = i;
	return 0;
}

int rnsc_iface_host_serves(const rnsc_iface_host *h, const char *type)
{
	return h && type && rnsc_plugin_host_find_iface(h->plugins, type) != NULL;
}

int rnsc_iface_open_failed_on_resource(int rc)
{
	return rc == RNSC_ERR_NOENT || rc == RNSC_ERR_PERM || rc == RNSC_ERR_IO ||
	       rc == RNSC_ERR_SYS;
}

int rnsc_iface_open_failure_retryable(int rc)
{
	return rnsc_iface_open_failed_on_resource(rc) || rc == RNSC_ERR_STATE ||
	       rc == RNSC_ERR_PLUGIN_INIT;
}

void rnsc_iface_host_set_retry_hooks(rnsc_iface_host *h, rnsc_iface_prepare_fn prep,
				     rnsc_iface_reopened_fn done, void *ud)
{
	h->prep = prep;
	h->reopened = done;
	h->retry_ud = ud;
}

static void retry_cb(rnsc_loop *loop, rnsc_timer *t, void *ud)
{
	(void)loop;
	(void)t;
	struct iface_retry *r = ud;
	rnsc_iface_host *h = r->h;
	r->attempts++;
	rnsc_log(h->ctx, RNSC_LOG_VERBOSE, "iface", "attempting to bring up %s again (attempt %u)",
		 r->name, r->attempts);
	rnsc_config_error e;
	memset(&e, 0, sizeof(e));
	int rc = h->prep ? h->prep(h->retry_ud, r->s, r->type) : 0;
	rnsc_iface *i = NULL;
	/* A failure is logged at error level by the open, as the reference logs each
	 * failed reconnect_port attempt. */
	if (rc == 0)
		rc = rnsc_iface_host_open(h, r->s, r->name, r->type, &i, &e);
	if (rc == 0) {
		rnsc_log(h->ctx, RNSC_LOG_NOTICE, "iface", "%s is up after %u retr%s", r->name,
			 r->attempts, r->attempts == 1 ? "y" : "ies");
		r->t = NULL; /* cancelling from its own callback frees it when we return */
		rnsc_loop_timer_cancel(h->loop, t);
		const rnsc_config_section *s = r->s;
		char type[128];
		snprintf(type, sizeof(type), "%s", r->type);
		retry_free(r);
		if (h->reopened)
			h->reopened(h->retry_ud, i, s, type);
		return;
	}
}

int rnsc_iface_host_open_retry(rnsc_iface_host *h, const rnsc_config_section *s, const char *name,
			       const char *type, unsigned retry_ms, rnsc_iface **out,
			       rnsc_config_error *err)
{
	int rc = rnsc_iface_host_open(h, s, name, type, out, err);
	if (rc == 0 || !retry_ms || !rnsc_iface_open_failure_retryable(rc))
		return rc;
	struct iface_retry *r = rnsc_calloc(h->ctx, 1, sizeof(*r));
	if (r) {
		r->h = h;
		r->s = s;
		r->period_ms = retry_ms;
		r->name = dup_str(h->ctx, name);
		r->type = dup_str(h->ctx, type);
	}
	if (!r || !r->name || !r->type ||
	    rnsc_loop_timer_add(h->loop, (uint64_t)retry_ms * 1000000u,
				(uint64_t)retry_ms * 1000000u, retry_cb, r, &r->t) != 0) {
		if (r) {
			rnsc_free(h->ctx, r->name);
			rnsc_free(h->ctx, r->type);
			rnsc_free(h->ctx, r);
		}
		return RNSC_ERR_NOMEM;
	}
	r->next = h->retries;
	h->retries = r;
	rnsc_log(h->ctx, RNSC_LOG_ERROR, "iface",
		 "%s will be brought up when its device appears (tried every %u s)", name,
		 retry_ms / 1000u);
	return rc;
}

size_t rnsc_iface_host_retry_count(const rnsc_iface_host *h)
{
	size_t n = 0;
	for (const struct iface_retry *r = h ? h->retries : NULL; r; r = r->next)
		n++;
	return n;
}

int rnsc_iface_host_open_config(rnsc_iface_host *h, const rnsc_config *cfg, rnsc_config_error *err)
{
	if (!h || !cfg)
		return RNSC_ERR_INVAL;
	int opened = 0;
	size_t n = rnsc_config_iface_count(cfg);
	for (size_t k = 0; k < n; k++) {
		rnsc_config_iface ci;
		int rc = rnsc_config_iface_at(cfg, k, &ci, err);
		if (rc)
			return rc;
		if (!ci.enabled)
			continue;
		rc = rnsc_iface_host_open(h, ci.section, ci.name, ci.type, NULL, err);
		if (rc)
			return rc;
		opened++;
	}
	return opened;
}

size_t rnsc_iface_host_count(const rnsc_iface_host *h)
{
	return h ? h->n : 0;
}

rnsc_iface *rnsc_iface_host_at(const rnsc_iface_host *h, size_t i)
{
	return h && i < h->n ? h->v[i] : NULL;
}

rnsc_iface *rnsc_iface_host_find(const rnsc_iface_host *h, const char *name)
{
	for (size_t k = 0; h && name && k < h->n; k++)
		if (strcmp(h->v[k]->name, name) == 0)
			return h->v[k];
	return NULL;
}

/* ---- per interface ------------------------------------------------------------------- */

int rnsc_iface_send(rnsc_iface *i, const uint8_t *frame, size_t len)
{
	if (!i || (!frame && len))
		return RNSC_ERR_INVAL;
	if (i->closing || !i->handle) {
		i->drops[RNSC_IFACE_DROP_OFFLINE]++;
		return RNSC_ERR_STATE;
	}
	i->h->depth++;
	int rc = i->ops->send(i->handle, frame, len);
	i->h->depth--;
	return rc;
}

int rnsc_iface_status_get(const rnsc_iface *i, rnsc_iface_status *out)
{
	if (!i || !out)
		return RNSC_ERR_INVAL;
	memset(out, 0, sizeof(*out));
	out->name = i->name;
	out->type = i->type;
	out->plugin = i->rec->desc->name;
	out->stats.struct_size = sizeof(out->stats);
	if (i->handle)
		(void)i->ops->stats(i->handle, &out->stats);
	out->stats.struct_size = sizeof(out->stats);
	memcpy(out->drops, i->drops, sizeof(out->drops));
	out->delivered = i->delivered;
	out->is_child = i->parent != NULL;
	return 0;
}

const char *rnsc_iface_name(const rnsc_iface *i)
{
	return i ? i->name : NULL;
}

int rnsc_iface_online(const rnsc_iface *i)
{
	return i ? i->online : 0;
}

rnsc_iface *rnsc_iface_parent(const rnsc_iface *i)
{
	return i ? i->parent : NULL;
}

int rnsc_iface_describe(const rnsc_iface *i, char *buf, size_t cap)
{
	if (!i || (!buf && cap))
		return RNSC_ERR_INVAL;
	if (i->handle && RNSC_OPS_HAS(i->ops, rnsc_iface_ops, describe))
		return i->ops->describe(i->handle, buf, cap);
	return snprintf(buf, cap, "%s[%s]", i->type, i->name);
}

void rnsc_iface_set_user(rnsc_iface *i, void *user)
{
	if (i)
		i->user = user;
}

void *rnsc_iface_user(const rnsc_iface *i)
{
	return i ? i->user : NULL;
}
