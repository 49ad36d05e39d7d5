// Decode tracekit pprof files with npm's pprof-format (Datadog's independent JS implementation of
// profile.proto) and print what a consumer sees.
// usage: node pprof_check.mjs FILE.pb.gz ...   One JSON line per file:
//   {"file","sampleTypes":[[type,unit]...],"defaultType","totals":{tid: weight},"total","samples",
//    "problems":[...]}  where problems lists broken references (location/function/mapping ids that
//    do not exist, value counts that differ from the sample types, a non-empty string 0).
import { Profile } from "pprof-format";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";

for (const file of process.argv.slice(2)) {
	const p = Profile.decode(gunzipSync(readFileSync(file)));
	const s = p.stringTable.strings;
	const str = (i) => s[Number(i)];
	const problems = [];
	if (s[0] !== "") problems.push("string 0 is not empty");
	const locs = new Map(p.location.map((l) => [BigInt(l.id), l]));
	const fns = new Set(p.function.map((f) => BigInt(f.id)));
	const maps = new Map(p.mapping.map((m) => [BigInt(m.id), m]));
	for (const l of p.location) {
		if (BigInt(l.mappingId) !== 0n && !maps.has(BigInt(l.mappingId))) problems.push(`location ${l.id}: no mapping ${l.mappingId}`);
		for (const ln of l.line) if (!fns.has(BigInt(ln.functionId))) problems.push(`location ${l.id}: no function ${ln.functionId}`);
	}
	const totals = {};
	let total = 0n, count = 0n;
	const threads = {};
	for (const sm of p.sample) {
		if (sm.value.length !== p.sampleType.length) problems.push("value count differs from sample types");
		for (const id of sm.locationId) if (!locs.has(BigInt(id))) problems.push(`sample: no location ${id}`);
		const lab = Object.fromEntries(sm.label.map((l) => [str(l.key), Number(l.str) ? str(l.str) : BigInt(l.num)]));
		const tid = String(lab.tid);
		totals[tid] = String(BigInt(totals[tid] || 0) + BigInt(sm.value[1]));
		threads[tid] = lab.thread;
		total += BigInt(sm.value[1]);
		count += BigInt(sm.value[0]);
	}
	console.log(JSON.stringify({
		file,
		sampleTypes: p.sampleType.map((t) => [str(t.type), str(t.unit)]),
		defaultType: str(p.defaultSampleType),
		totals, threads, total: String(total), samples: String(count),
		mappings: p.mapping.map((m) => ({ file: str(m.filename), buildId: str(m.buildId), start: "0x" + BigInt(m.memoryStart).toString(16) })),
		functions: p.function.length, locations: p.location.length,
		problems: problems.slice(0, 5),
	}));
}
