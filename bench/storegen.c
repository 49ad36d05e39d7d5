/* storegen — generated field reports: session directories as libtracekit-monitor writes them
 * (records, images.json) plus the meta.json an app adds (app, version, build, device, os, session).
 *
 *   storegen OUTDIR SESSIONS HANGS_PER_SESSION [SEED] [--cpu N] [--foreground]
 *
 * Standalone on purpose (no libtracekit): it is the ground truth the store tests check against.
 * It also writes OUTDIR/truth.tsv: one line per hang, "version<TAB>duration_ms<TAB>signature",
 * the signature being the first five app frames (leaf first) as image+offset. Deterministic per seed.
 *
 * A fleet: storegen OUTDIR SESSIONS HANGS [SEED] [--versions N] [--days N] [--devices N]
 * [--regress VERSION] (any of them): N versions 5.0 … 5.9, 6.0 … taken in turn (each version gets
 * the same number of sessions), sessions launched over N days (default 7) from 2026-11-18 on N
 * device models, and hang durations that no longer grow with the version, so that the one version
 * given to --regress is the only one that is worse: its sessions have as many hangs again, all on
 * one stack (a site the others rarely hit), each four times as long as usual (log-normal median ×4).
 * OUTDIR/regression.tsv then says which: "version<TAB>signature<TAB>extra hangs per
 * session<TAB>duration factor". A fleet also writes OUTDIR/fleet.tsv, one line per hang:
 * "session<TAB>version<TAB>device<TAB>os<TAB>start<TAB>duration_ms<TAB>signature". Without these
 * options the output is what it always was. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static uint64_t rng;
static uint64_t next(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}
static double unif(void)
{
	return (double)(next() >> 11) / 9007199254740992.0;
}

/* a fleet names the versions and device models past these (5.3 …, iPhone17,4 …) in main */
static const char *versions[1000] = {"5.0", "5.1", "5.2"};
static const char *devices[1000] = {"iPhone12,1", "iPhone13,2", "iPhone14,5", "iPhone15,3", "iPad13,4"};
static const char *const oses[] = {"iOS 16.7", "iOS 17.2", "iOS 17.5"};

#define NSTACKS 24
#define DEPTH 8
/* Each hang site: DEPTH app-frame offsets inside the app image, leaf first. */
static uint64_t stacks[NSTACKS][DEPTH];

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: storegen OUTDIR SESSIONS HANGS_PER_SESSION [SEED] [--cpu N]\n");
		return 2;
	}
	const char *out = argv[1];
	long sessions = atol(argv[2]), hangs = atol(argv[3]);
	uint64_t seed = argc > 4 && argv[4][0] != '-' ? strtoull(argv[4], NULL, 10) : 1;
	long cpu = 0;
	for (int i = 4; i < argc - 1; i++)
		if (strcmp(argv[i], "--cpu") == 0)
			cpu = atol(argv[i + 1]);
	/* --foreground: each run also writes its foreground line (the monitor's, for the hang rate) and
	 * OUTDIR/foreground.tsv "version<TAB>session<TAB>foreground_s<TAB>hang ms,hang ms,…" */
	FILE *fgt = NULL;
	for (int i = 4; i < argc; i++)
		if (strcmp(argv[i], "--foreground") == 0) {
			char fp[4096];
			snprintf(fp, sizeof fp, "%s/foreground.tsv", argv[1]);
			mkdir(argv[1], 0777);
			if (!(fgt = fopen(fp, "w")))
				return perror(fp), 1;
		}
	rng = seed * 0x9e3779b97f4a7c15ull + 1;
	for (int s = 0; s < NSTACKS; s++)
		for (int d = 0; d < DEPTH; d++)
			stacks[s][d] = 0x1000 + (next() % 0x80000) * 4;
	mkdir(out, 0777);
	char path[4096];
	/* the fleet options (draw nothing from rng: without them the output is unchanged) */
	long nver = 3, days = 7, ndev = 5;
	const long base_hangs = hangs;
	const char *regress = NULL;
	FILE *ftruth = NULL;
	for (int i = 4; i < argc - 1; i++) {
		long *opt = strcmp(argv[i], "--versions") == 0  ? &nver
		            : strcmp(argv[i], "--days") == 0    ? &days
		            : strcmp(argv[i], "--devices") == 0 ? &ndev
		                                                : NULL;
		if (opt)
			*opt = atol(argv[i + 1]);
		if (strcmp(argv[i], "--regress") == 0)
			regress = argv[i + 1];
		if (opt || regress) {
			snprintf(path, sizeof path, "%s/fleet.tsv", out);
			if (!ftruth && !(ftruth = fopen(path, "w"))) /* closed at exit */
				return perror(path), 1;
		}
	}
	if (nver < 1 || nver > 1000 || days < 1 || days > 100000 || ndev < 1 || ndev > 1000) {
		fprintf(stderr, "storegen: --versions and --devices take 1 to 1000, --days 1 to 100000\n");
		return 2;
	}
	static char names[2][1000][32];
	for (int i = 3; i < 1000; i++)
		snprintf(names[0][i], sizeof names[0][i], "%d.%d", 5 + i / 10, i % 10), versions[i] = names[0][i];
	for (int i = 5; i < 1000; i++)
		snprintf(names[1][i], sizeof names[1][i], "iPhone%d,%d", 16 + i / 4, 1 + i % 4),
		    devices[i] = names[1][i];
	int rv = -1;                   /* the regressed version's index */
	const int rsite = NSTACKS - 1; /* the regression's stack: the rarest site elsewhere */
	for (long i = 0; regress && i < nver; i++)
		if (strcmp(regress, versions[i]) == 0)
			rv = (int)i;
	if (regress && rv < 0) {
		fprintf(stderr, "storegen: --regress %s is not one of the %ld versions (5.0, 5.1, …)\n", regress, nver);
		return 2;
	}
	if (rv >= 0) {
		snprintf(path, sizeof path, "%s/regression.tsv", out);
		FILE *rf = fopen(path, "w");
		if (!rf)
			return perror(path), 1;
		fprintf(rf, "%s\tAtlas+0x%llx", versions[rv], (unsigned long long)stacks[rsite][0]);
		for (int d = 1; d < 5; d++)
			fprintf(rf, ";Atlas+0x%llx", (unsigned long long)stacks[rsite][d]);
		fprintf(rf, "\t%ld\t4\n", base_hangs);
		fclose(rf);
	}
	snprintf(path, sizeof path, "%s/truth.tsv", out);
	FILE *truth = fopen(path, "w");
	if (!truth)
		return perror(path), 1;
	const double t0 = 1795000000.0; /* 2026-11-18 */
	for (long s = 0; s < sessions; s++) {
		snprintf(path, sizeof path, "%s/s%07ld", out, s);
		mkdir(path, 0777);
		int v = (int)(next() % 3), dev = (int)(next() % 5), os = (int)(next() % 3);
		if (ftruth) {
			v = (int)(s % nver);
			dev = (int)(next() % (uint64_t)ndev);
			hangs = base_hangs + (v == rv ? base_hangs : 0);
		}
		uint64_t app_base = 0x100000000ull + (next() % 0x10000) * 0x4000; /* ASLR slide per session */
		uint64_t sys_base = 0x180000000ull + (next() % 0x10000) * 0x4000;
		double launch = t0 + unif() * (double)days * 86400;
		FILE *f;
		snprintf(path, sizeof path, "%s/s%07ld/meta.json", out, s);
		if (!(f = fopen(path, "w")))
			return perror(path), 1;
		fprintf(f,
		        "{\"app\":\"Atlas\",\"version\":\"%s\",\"build\":\"%s.%d\",\"device\":\"%s\",\"os\":\"%s\","
		        "\"session\":\"gen-%llu-%ld\"}\n",
		        versions[v], versions[v], 100 + v, devices[dev], oses[os], (unsigned long long)seed, s);
		fclose(f);
		/* as the Linux monitor leaves a session: the run's own images file, named by every record of
		 * the run, and images.json with the same content */
		char run_images[64];
		snprintf(run_images, sizeof run_images, "images-%ld-%.0f.json", 1000 + s, launch * 1e6);
		for (int copy = 0; copy < 2; copy++) {
			snprintf(path, sizeof path, "%s/s%07ld/%s", out, s, copy ? "images.json" : run_images);
			if (!(f = fopen(path, "w")))
				return perror(path), 1;
			fprintf(f,
			        "{\"os\":\"%s\",\"arch\":\"arm64\",\"pid\":%ld,\"images\":["
			        "{\"path\":\"/var/containers/Bundle/Application/Atlas.app/Atlas\",\"base\":\"0x%llx\","
			        "\"build_id\":\"a71a5000\",\"loads\":[{\"vaddr\":\"0x0\",\"memsz\":\"0x400000\","
			        "\"offset\":\"0x0\","
			        "\"flags\":\"r-x\"}]},"
			        "{\"path\":\"/usr/lib/system/"
			        "libsystem_kernel.dylib\",\"base\":\"0x%llx\",\"build_id\":\"5e5e5e\","
			        "\"loads\":[{\"vaddr\":\"0x0\",\"memsz\":\"0x100000\",\"offset\":\"0x0\",\"flags\":\"r-"
			        "x\"}]}]}\n",
			        oses[os], 1000 + s, (unsigned long long)app_base, (unsigned long long)sys_base);
			fclose(f);
		}
		snprintf(path, sizeof path, "%s/s%07ld/records", out, s);
		if (!(f = fopen(path, "w")))
			return perror(path), 1;
		fprintf(f, "collection,key,value\nlaunch-time,%.6f,%.6f\n", launch, launch);
		double t = launch;
		if (fgt)
			fprintf(fgt, "%s\tgen-%llu-%ld\t", versions[v], (unsigned long long)seed, s);
		for (long h = 0; h < hangs; h++) {
			/* Zipf-ish choice of site; durations log-normal, longer in 5.2 */
			int site = (int)floor(pow(unif(), 2.0) * NSTACKS);
			double mu = log(400.0) + 0.25 * v, sigma = 0.8;
			if (ftruth) /* a fleet: the same in every version but the regressed one's extra hangs */
				mu = log(400.0) + (h >= base_hangs ? log(4.0) : 0),
				site = h >= base_hangs ? rsite : site;
			double z = sqrt(-2 * log(unif() + 1e-300)) * cos(2 * M_PI * unif());
			long ms = 250 + (long)floor(exp(mu + sigma * z));
			t += 1 + unif() * 600;
			long samples = ms / 50 + 1;
			char frames[2048];
			size_t fl = (size_t)snprintf(frames, sizeof frames, "\"0x%llx\"",
			                             (unsigned long long)(sys_base + 0x1234));
			for (int d = 0; d < DEPTH; d++)
				fl += (size_t)snprintf(frames + fl, sizeof frames - fl, ",\"0x%llx\"",
				                       (unsigned long long)(app_base + stacks[site][d]));
			fprintf(f,
			        "hang,%.3f,{\"start\":%.3f,\"duration_ms\":%ld,\"threshold_ms\":250,\"tid\":%ld,"
			        "\"thread\":\"main\",\"images\":\"%s\","
			        "\"blocked_in\":{\"syscall\":202,\"wchan\":\"futex_wait_queue\"},"
			        "\"samples\":%ld,\"live\":false,\"suppressed\":0,\"threads\":[{\"tid\":%ld,\"name\":"
			        "\"main\","
			        "\"frames\":[%s]}]}\n",
			        t, t, ms, 1000 + s, run_images, samples, 1000 + s, frames);
			/* the tree: root = outermost frame, one path down to the leaf */
			fprintf(f, "hang-stackframe,%.3f,", t);
			for (int d = DEPTH - 1; d >= 0; d--)
				fprintf(f, "%s{\"frame\":\"0x%llx\",\"count\":%ld,\"proportion\":1.0,\"children\":[",
				        d == DEPTH - 1 ? "[" : "", (unsigned long long)(app_base + stacks[site][d]),
				        samples);
			fprintf(f, "{\"frame\":\"0x%llx\",\"count\":%ld,\"proportion\":1.0}",
			        (unsigned long long)(sys_base + 0x1234), samples);
			for (int d = 0; d < DEPTH; d++)
				fputs("]}", f);
			fputs("]\n", f);
			if (fgt)
				fprintf(fgt, "%s%ld", h ? "," : "", ms);
			fprintf(truth, "%s\t%ld\tAtlas+0x%llx", versions[v], ms, (unsigned long long)stacks[site][0]);
			for (int d = 1; d < 5; d++)
				fprintf(truth, ";Atlas+0x%llx", (unsigned long long)stacks[site][d]);
			fputc('\n', truth);
			if (ftruth) {
				fprintf(ftruth, "gen-%llu-%ld\t%s\t%s\t%s\t%.3f\t%ld\tAtlas+0x%llx",
				        (unsigned long long)seed, s, versions[v], devices[dev], oses[os], t, ms,
				        (unsigned long long)stacks[site][0]);
				for (int d = 1; d < 5; d++)
					fprintf(ftruth, ";Atlas+0x%llx", (unsigned long long)stacks[site][d]);
				fputc('\n', ftruth);
			}
		}
		for (long c = 0; c < cpu; c++) {
			t += 60 + unif() * 600;
			double cf = t - 978307200.0; /* CFAbsoluteTime */
			double lasting = 60 + unif() * 240, avg = 80 + unif() * 120;
			fprintf(f,
			        "cpu-highload,%.2f,{\"start\":\"%.2f\",\"lasting\":\"%.2f\",\"average\":\"%.2f\","
			        "\"live\":false,"
			        "\"samples\":3}\n",
			        cf, cf, lasting, avg);
			fprintf(
			    f, "cpu-highload-stackframe,%.2f,[{\"frame\":\"0x%llx\",\"count\":3,\"proportion\":1.0}]\n",
			    cf, (unsigned long long)(app_base + stacks[0][0]));
		}
		if (fgt) {
			/* foreground: the run's span and a minute, in whole ms (no draw: the rest stays as it was) */
			double fg = floor((t - launch + 60) * 1000) / 1000;
			fprintf(f, "foreground,%.6f,{\"seconds\":%.3f,\"live\":false,\"pid\":%ld}\n", launch, fg,
			        1000 + s);
			fprintf(fgt, "\t%.3f\n", fg);
		}
		fclose(f);
	}
	if (fgt)
		fclose(fgt);
	fclose(truth);
	return 0;
}
