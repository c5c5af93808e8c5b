// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What every part of the bench shares and nothing else: the run's settings,
 * the stop flag, progress lines, and a scenario's points (planning them,
 * recording their samples, errors and commands). It calls nothing of the
 * bench's own, so main.c (the driver), run.c (processes) and the scenarios
 * all build on it without calling back into one another.
 */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "netns.h"

struct bench_cfg bench = { .repeat = 5, .port = 5201 };
volatile int bench_stop;

void bench_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "xdplab-bench: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int bench_sh_status(int status)
{
	if (status == 128 + SIGINT)
		bench_stop = 1;
	return status;
}

/* ---- planning helpers ---- */

struct point *scen_add(struct scen *s, int base0, int base1, const char *group,
		       const char *label, const char *idfmt, ...)
{
	struct point *p;
	va_list ap;
	size_t n;

	if (s->npts >= BENCH_MAX_POINTS)
		abort();
	p = &s->pts[s->npts++];
	memset(p, 0, sizeof(*p));
	n = snprintf(p->id, sizeof(p->id), "%s/", s->def->name);
	va_start(ap, idfmt);
	vsnprintf(p->id + n, sizeof(p->id) - n, idfmt, ap);
	va_end(ap);
	snprintf(p->group, sizeof(p->group), "%s", group);
	snprintf(p->label, sizeof(p->label), "%s", label);
	p->base[0] = base0;
	p->base[1] = base1;
	p->selected = true;
	for (int m = 0; m < BENCH_MAX_METRICS; m++)
		for (int r = 0; r < BENCH_MAX_ROUNDS; r++)
			p->m[m][r] = NAN;
	return p;
}

void scen_plan_napi(struct scen *s, int nprog, const char *const labels[],
		    const char *const ids[])
{
	int first[8];

	for (int napi = 0; napi <= 1; napi++) {
		int base = s->npts;

		for (int prog = 0; prog < nprog && prog < 8; prog++) {
			struct point *p;

			if (!napi)
				first[prog] = s->npts;
			p = scen_add(s, base, napi ? first[prog] : -1, napi ? "IFF_NAPI on" :
				     "IFF_NAPI off", labels[prog], "napi-%s/%s", napi ? "on" : "off",
				     ids[prog]);
			p->knob[0] = napi;
			p->knob[1] = prog;
		}
	}
}

void point_set(struct point *p, int round, int mi, double v)
{
	if (round >= 0 && round < BENCH_MAX_ROUNDS && mi >= 0 && mi < BENCH_MAX_METRICS)
		p->m[mi][round] = v;
}

void point_set_cpu(struct point *p, int round, int user, const struct cpusplit *cs)
{
	point_set(p, round, user, cs->user);
	point_set(p, round, user + 1, cs->system);
	point_set(p, round, user + 2, cs->softirq);
	point_set(p, round, user + 3, cs->idle);
}

static void point_verr(struct point *p, const char *fmt, va_list ap)
{
	char msg[320];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	for (char *c = msg; *c; c++)
		if (*c == '\n' || *c == '|')
			*c = *c == '|' ? '/' : ' ';
	if (bench.verbose)
		bench_log("%s: %s", p->id, msg);
	if (strstr(p->error, msg))
		return;		/* the same failure in another round */
	n = strlen(p->error);
	snprintf(p->error + n, sizeof(p->error) - n, "%s%s", n ? "; " : "", msg);
}

void point_err(struct point *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	point_verr(p, fmt, ap);
	va_end(ap);
}

void point_skip(struct point *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	point_verr(p, fmt, ap);
	va_end(ap);
	p->skip = true;
}

void point_take_error(struct point *p, struct scen *s)
{
	point_err(p, "%s", s->error);
	s->error[0] = '\0';
}

void point_cmd(struct point *p, const char *fmt, ...)
{
	size_t n = strlen(p->cmd);
	va_list ap;

	/* "a &" runs alongside what follows: "a & b"; otherwise "a; b". */
	if (n && n + 3 < sizeof(p->cmd)) {
		strcat(p->cmd, p->cmd[n - 1] == '&' ? " " : "; ");
		n = strlen(p->cmd);
	}
	va_start(ap, fmt);
	vsnprintf(p->cmd + n, sizeof(p->cmd) - n, fmt, ap);
	va_end(ap);
}

int scen_secs(const struct scen *s)
{
	int secs = (int)(s->duration + 0.5);

	return secs < 1 ? 1 : secs;
}

int scen_netns_add(struct scen *s, const char *tag, char *ns)
{
	size_t i;

	for (i = 0; i < sizeof(s->netns) / sizeof(s->netns[0]) && s->netns[i]; i++)
		;
	if (i == sizeof(s->netns) / sizeof(s->netns[0])) {
		snprintf(s->error, sizeof(s->error), "more namespaces than struct scen holds");
		return -1;
	}
	if (netns_add(tag, ns)) {
		snprintf(s->error, sizeof(s->error), "cannot make namespace %s (run with -v)", tag);
		return -1;
	}
	s->netns[i] = ns;
	return 0;
}

void scen_netns_del_all(struct scen *s)
{
	for (size_t i = 0; i < sizeof(s->netns) / sizeof(s->netns[0]); i++) {
		if (s->netns[i] && s->netns[i][0])
			netns_del(s->netns[i]);
		if (s->netns[i])
			s->netns[i][0] = '\0';
		s->netns[i] = NULL;
	}
}
