// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * From samples to what a reader sees: median (min–max), ratios taken
 * within a round, a markdown table per scenario, one JSON file with every
 * sample, and a gnuplot bar chart of the ratios.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int stats3(const double *v, int n, double *med, double *min, double *max)
{
	double buf[BENCH_MAX_ROUNDS];
	int k = 0;

	for (int i = 0; i < n && i < BENCH_MAX_ROUNDS; i++)
		if (!isnan(v[i]))
			buf[k++] = v[i];
	if (!k) {
		*med = *min = *max = NAN;
		return 0;
	}
	qsort(buf, k, sizeof(buf[0]), cmp_double);
	*min = buf[0];
	*max = buf[k - 1];
	*med = k % 2 ? buf[k / 2] : (buf[k / 2 - 1] + buf[k / 2]) / 2;
	return k;
}

int point_ratios(const struct scen *s, const struct point *p, int which,
		 double out[BENCH_MAX_ROUNDS])
{
	int mi = s->def->cols[0].metric, n = 0;
	const struct point *b;

	for (int r = 0; r < BENCH_MAX_ROUNDS; r++)
		out[r] = NAN;
	if (p->base[which] < 0 || p->base[which] == p - s->pts)
		return 0;
	b = &s->pts[p->base[which]];
	for (int r = 0; r < s->rounds; r++) {
		if (isnan(p->m[mi][r]) || isnan(b->m[mi][r]) || b->m[mi][r] == 0)
			continue;
		out[r] = p->m[mi][r] / b->m[mi][r];
		n++;
	}
	return n;
}

static void fmt_val(char *buf, size_t len, const char *fmt, double v)
{
	if (isnan(v))
		snprintf(buf, len, "—");
	else
		snprintf(buf, len, fmt, v);
}

static void fmt_range(char *buf, size_t len, const char *fmt, const double *v, int n)
{
	double med, lo, hi;
	char a[32], b[32], c[32];

	if (!stats3(v, n, &med, &lo, &hi)) {
		snprintf(buf, len, "—");
		return;
	}
	fmt_val(a, sizeof(a), fmt, med);
	fmt_val(b, sizeof(b), fmt, lo);
	fmt_val(c, sizeof(c), fmt, hi);
	snprintf(buf, len, "%s (%s–%s)", a, b, c);
}

static int nsamples(const struct scen *s, const struct point *p)
{
	int n = 0;

	for (int r = 0; r < s->rounds; r++)
		n += !isnan(p->m[s->def->cols[0].metric][r]);
	return n;
}

void report_table(FILE *f, const struct scen *s)
{
	const struct scenario *d = s->def;
	bool ratio[2] = {}, notes = false;
	struct utsname u;
	char cell[128];

	uname(&u);
	for (int i = 0; i < s->npts; i++) {
		const struct point *p = &s->pts[i];

		if (!p->selected)
			continue;
		for (int w = 0; w < 2; w++)
			ratio[w] |= d->ratio_head[w] && p->base[w] >= 0;
		notes |= p->error[0] != '\0';
	}

	fprintf(f, "\n### %s: %s\n\n", d->name, d->title);
	fprintf(f, "%s\n\n", d->seed);
	fprintf(f, "Linux %s, %d round%s of %g s samples; median (min–max) over the rounds; "
		"ratios are taken within each round, then the median.\n\n",
		u.release, s->rounds, s->rounds == 1 ? "" : "s", s->duration);
	if (s->error[0])
		fprintf(f, "**Not run:** %s\n\n", s->error);

	fprintf(f, "| | |");
	for (int c = 0; c < d->ncols; c++) {
		fprintf(f, " %s |", d->cols[c].head);
		if (c == 0)
			for (int w = 0; w < 2; w++)
				if (ratio[w])
					fprintf(f, " %s |", d->ratio_head[w]);
	}
	fprintf(f, " n |%s\n|---|---|", notes ? " note |" : "");
	for (int c = 0; c < d->ncols + ratio[0] + ratio[1]; c++)
		fprintf(f, "---:|");
	fprintf(f, "---:|%s\n", notes ? "---|" : "");

	for (int i = 0; i < s->npts; i++) {
		const struct point *p = &s->pts[i];
		double r[BENCH_MAX_ROUNDS];

		if (!p->selected)
			continue;
		fprintf(f, "| %s | %s |", p->group, p->label);
		for (int c = 0; c < d->ncols; c++) {
			const struct column *col = &d->cols[c];
			double med, lo, hi;

			if (c == 0) {
				fmt_range(cell, sizeof(cell), col->fmt, p->m[col->metric], s->rounds);
				fprintf(f, " %s |", cell);
				for (int w = 0; w < 2; w++) {
					if (!ratio[w])
						continue;
					if (point_ratios(s, p, w, r))
						fmt_range(cell, sizeof(cell), "%.2f", r, s->rounds);
					else
						snprintf(cell, sizeof(cell), "%s",
							 p->base[w] == i && nsamples(s, p) ? "1" : "");
					fprintf(f, " %s |", cell);
				}
				continue;
			}
			stats3(p->m[col->metric], s->rounds, &med, &lo, &hi);
			fmt_val(cell, sizeof(cell), col->fmt, med);
			fprintf(f, " %s |", cell);
		}
		fprintf(f, " %d |", nsamples(s, p));
		if (notes)
			fprintf(f, " %.200s |", p->error);
		fprintf(f, "\n");
	}
	if (s->note[0])
		fprintf(f, "\n%s\n", s->note);

	fprintf(f, "\nReproduce a row (with its baseline): `%s -p ID`%s. What each row ran last:\n\n",
		bench.self, bench.quick ? " (add -q for these short samples)" : "");
	for (int i = 0; i < s->npts; i++) {
		const struct point *p = &s->pts[i];

		if (p->selected)
			fprintf(f, "- `%s`: `%s`\n", p->id, p->cmd[0] ? p->cmd : "(not run)");
	}
	fprintf(f, "\n");
}

/* ---- JSON ---- */

static void jstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* "a & b; c" -> ["a &", "b", "c"]: one command line an element. */
static void jcmds(FILE *f, const char *cmd)
{
	char buf[sizeof(((struct point *)0)->cmd)], *start = buf;
	bool first = true;

	snprintf(buf, sizeof(buf), "%s", cmd);
	fputc('[', f);
	for (char *c = buf; *start; c++) {
		bool end = !*c, semi = *c == ';' && c[1] == ' ', amp = *c == '&' && c[1] == ' ';

		if (!end && !semi && !amp)
			continue;
		if (amp)
			c++;	/* keep the '&' */
		*c = '\0';
		if (!first)
			fputc(',', f);
		jstr(f, start);
		first = false;
		if (end)
			break;
		start = c + 1;
		while (*start == ' ')
			start++;
	}
	fputc(']', f);
}

static void jnum(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else
		fprintf(f, "%.6g", v);
}

/* key is the JSON text before the value: ',"name":' and the like. */
static void jfield(FILE *f, const char *key, const char *v)
{
	fputs(key, f);
	jstr(f, v);
}

static void jfield_num(FILE *f, const char *key, double v)
{
	fputs(key, f);
	jnum(f, v);
}

static void jstats(FILE *f, const double *v, int n)
{
	double med, lo, hi;

	fputs("{\"samples\":[", f);
	for (int r = 0; r < n; r++) {
		if (r)
			fputc(',', f);
		jnum(f, v[r]);
	}
	stats3(v, n, &med, &lo, &hi);
	jfield_num(f, "],\"median\":", med);
	jfield_num(f, ",\"min\":", lo);
	jfield_num(f, ",\"max\":", hi);
	fputc('}', f);
}

static void file_field(char *buf, size_t len, const char *path, const char *key)
{
	char line[512];
	FILE *fp = fopen(path, "re");

	buf[0] = '\0';
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		char *colon;

		if (strncmp(line, key, strlen(key)) || !(colon = strchr(line, ':')))
			continue;
		colon++;
		while (*colon == ' ' || *colon == '\t')
			colon++;
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(buf, len, "%s", colon);
		break;
	}
	fclose(fp);
}

void report_json(FILE *f, struct scen *const *all, int n, const char *argv_line,
		 bool interrupted, double load_before)
{
	char host[256] = "", date[64], cpu[256], mem[64];
	time_t t = time(NULL);
	struct utsname u;

	uname(&u);
	gethostname(host, sizeof(host) - 1);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S%z", localtime(&t));
	file_field(cpu, sizeof(cpu), "/proc/cpuinfo", "model name");
	file_field(mem, sizeof(mem), "/proc/meminfo", "MemTotal");

	jfield(f, "{\"tool\":\"xdplab-bench\",\"date\":", date);
	jfield(f, ",\"command\":", argv_line);
	fprintf(f, ",\"interrupted\":%s,\"quick\":%s,\"repeat\":%d,", interrupted ? "true" : "false",
		bench.quick ? "true" : "false", bench.repeat);
	jfield(f, "\"machine\":{\"hostname\":", host);
	jfield(f, ",\"arch\":", u.machine);
	jfield(f, ",\"cpu\":", cpu);
	fprintf(f, ",\"cpus\":%ld,\"memory\":", sysconf(_SC_NPROCESSORS_ONLN));
	jstr(f, mem);
	jfield_num(f, ",\"load_before\":", load_before);
	jfield(f, "},\"kernel\":{\"release\":", u.release);
	jfield(f, ",\"version\":", u.version);
	fputs("},\"scenarios\":[", f);

	for (int i = 0; i < n; i++) {
		const struct scen *s = all[i];
		const struct scenario *d = s->def;

		fputs(i ? ",\n{" : "\n{", f);
		jfield(f, "\"name\":", d->name);
		jfield(f, ",\"title\":", d->title);
		jfield(f, ",\"seed\":", d->seed);
		fprintf(f, ",\"rounds\":%d,\"warmup_rounds\":%d,\"alternate\":%s,\"pin\":%s,"
			"\"sample_seconds\":%g,\"wall_seconds\":%.1f,",
			s->rounds, bench.warmup, bench.alternate ? "true" : "false",
			bench.pin ? "true" : "false", s->duration, s->ended - s->started);
		jfield_num(f, "\"load_at_start\":", s->load);
		jfield(f, ",\"note\":", s->note);
		jfield(f, ",\"error\":", s->error);
		jfield(f, ",\"main_metric\":", d->metrics[d->cols[0].metric].key);
		fputs(",\"units\":{", f);
		for (int m = 0; m < d->nmetrics; m++) {
			if (m)
				fputc(',', f);
			jstr(f, d->metrics[m].key);
			fputc(':', f);
			jstr(f, d->metrics[m].unit);
		}
		fputs("},\"points\":[", f);
		for (int j = 0, first = 1; j < s->npts; j++) {
			const struct point *p = &s->pts[j];
			double r[BENCH_MAX_ROUNDS];

			if (!p->selected)
				continue;
			fputs(first ? "\n {" : ",\n {", f);
			first = 0;
			jfield(f, "\"id\":", p->id);
			jfield(f, ",\"group\":", p->group);
			jfield(f, ",\"label\":", p->label);
			fputs(",\"reproduce\":", f);
			{
				char *rep = NULL;

				if (asprintf(&rep, "%s -p %s", bench.self, p->id) < 0)
					rep = NULL;
				jstr(f, rep ?: p->id);
				free(rep);
			}
			fputs(",\"commands\":", f);
			jcmds(f, p->cmd);
			jfield(f, ",\"error\":", p->error);
			fputs(",\"metrics\":{", f);
			for (int m = 0; m < d->nmetrics; m++) {
				if (m)
					fputc(',', f);
				jstr(f, d->metrics[m].key);
				fputc(':', f);
				jstats(f, p->m[m], s->rounds);
			}
			fputs("},\"ratios\":[", f);
			for (int w = 0, k = 0; w < 2; w++) {
				if (p->base[w] < 0 || p->base[w] == j || !d->ratio_head[w])
					continue;
				point_ratios(s, p, w, r);
				fputs(k++ ? ",{\"to\":" : "{\"to\":", f);
				jstr(f, s->pts[p->base[w]].id);
				jfield(f, ",\"name\":", d->ratio_head[w]);
				fputs(",\"ratio\":", f);
				jstats(f, r, s->rounds);
				fputc('}', f);
			}
			fputs("]}", f);
		}
		fputs("]}", f);
	}
	fputs("]}\n", f);
}

/* ---- plots ---- */

static void gp_label(FILE *f, const struct point *p)
{
	fputc('"', f);
	for (const char *c = p->group; *c; c++)
		fputc(*c == '"' ? '\'' : *c, f);
	fputs("\\n", f);
	for (const char *c = p->label; *c; c++)
		fputc(*c == '"' ? '\'' : *c, f);
	fputc('"', f);
}

int report_plot(const struct scen *s, const char *dir)
{
	const struct scenario *d = s->def;
	char path[PATH_MAX + 64], cmd[PATH_MAX * 2 + 64];
	bool have[2] = {}, any = false;
	int rows = 0, st;
	FILE *f;

	if (!s->rounds)
		return 0;
	/* Nothing measured (every row said why not): no plot to draw. */
	for (int i = 0; i < s->npts && !any; i++) {
		double med, lo, hi;

		any = s->pts[i].selected &&
		      stats3(s->pts[i].m[d->cols[0].metric], s->rounds, &med, &lo, &hi);
	}
	if (!any)
		return 0;
	any = false;
	for (int i = 0; i < s->npts; i++) {
		double r[BENCH_MAX_ROUNDS];

		for (int w = 0; w < 2; w++)
			if (s->pts[i].selected && d->ratio_head[w] && point_ratios(s, &s->pts[i], w, r))
				have[w] = any = true;
	}

	/* index, label, then median min max of: ratio 0, ratio 1, main metric */
	snprintf(path, sizeof(path), "%s/%s.dat", dir, d->name);
	f = fopen(path, "w");
	if (!f)
		goto err;
	fprintf(f, "# %s: %s\n# i label  r0_med r0_min r0_max  r1_med r1_min r1_max  %s_med min max\n",
		d->name, d->title, d->metrics[d->cols[0].metric].key);
	for (int i = 0; i < s->npts; i++) {
		const struct point *p = &s->pts[i];
		double r[BENCH_MAX_ROUNDS], med, lo, hi;

		if (!p->selected)
			continue;
		if (any && !point_ratios(s, p, 0, r) && !point_ratios(s, p, 1, r) &&
		    !(p->base[0] == i || p->base[1] == i))
			continue;
		fprintf(f, "%d ", rows++);
		gp_label(f, p);
		for (int w = 0; w < 2; w++) {
			if (point_ratios(s, p, w, r))
				stats3(r, s->rounds, &med, &lo, &hi);
			else
				med = lo = hi = p->base[w] == i ? 1 : NAN;
			fprintf(f, " %g %g %g", med, lo, hi);
		}
		stats3(p->m[d->cols[0].metric], s->rounds, &med, &lo, &hi);
		fprintf(f, " %g %g %g\n", med, lo, hi);
	}
	fclose(f);
	if (!rows)
		return 0;

	snprintf(path, sizeof(path), "%s/%s.gp", dir, d->name);
	f = fopen(path, "w");
	if (!f)
		goto err;
	fprintf(f, "# gnuplot %s.gp (in this directory) redraws %s.png\n", d->name, d->name);
	fprintf(f, "set terminal pngcairo size %d,640 font 'sans,9'\n", 260 + 70 * rows);
	fprintf(f, "set output '%s.png'\n", d->name);
	fprintf(f, "set datafile missing 'nan'\n");
	fprintf(f, "set title \"%s: %s\\n%d rounds; bars: median, whiskers: min-max\" noenhanced\n",
		d->name, d->title, s->rounds);
	fprintf(f, "set style fill solid 0.5 border -1\nset grid ytics\nset yrange [0:*]\n"
		"set xrange [-0.6:%d.6]\nset bmargin 13\nset xtics rotate by -40 left noenhanced\n"
		"set key top right noenhanced\n", rows - 1);
	if (any) {
		int nb = have[0] + have[1];
		double w = nb > 1 ? 0.38 : 0.6;

		fprintf(f, "set ylabel \"%s\"\nset boxwidth %g\n",
			d->plot_ylabel ?: "ratio to baseline", w);
		fprintf(f, "plot 1 with lines dt 2 lc 'gray' notitle");
		for (int b = 0, k = 0; b < 2; b++) {
			if (!have[b])
				continue;
			fprintf(f, ", '%s.dat' using ($1%+g):%d:%d:%d:(%g)%s with boxerrorbars title \"%s\"",
				d->name, nb > 1 ? (k ? w / 2 : -w / 2) : 0.0, 3 + 3 * b, 4 + 3 * b,
				5 + 3 * b, w, k ? "" : ":xtic(2)", d->ratio_head[b]);
			k++;
		}
		fprintf(f, "\n");
	} else {
		fprintf(f, "set ylabel \"%s (%s)\"\nset boxwidth 0.6\n",
			d->cols[0].head, d->metrics[d->cols[0].metric].unit);
		fprintf(f, "plot '%s.dat' using 1:9:10:11:(0.6):xtic(2) with boxerrorbars notitle\n",
			d->name);
	}
	fclose(f);

	snprintf(cmd, sizeof(cmd), "cd '%s' && gnuplot '%s.gp'", dir, d->name);
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "xdplab-bench: gnuplot failed for %s/%s.gp%s\n", dir, d->name,
			access("/usr/bin/gnuplot", X_OK) ?
			" (gnuplot missing; hint: scripts/deps.sh bench)" : "");
		return -1;
	}
	return 0;
err:
	fprintf(stderr, "xdplab-bench: cannot write %s: %s\n", path, strerror(errno));
	return -1;
}
