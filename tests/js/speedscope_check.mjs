// Validate tracekit speedscope files against the JSON schema npm's speedscope package ships
// (dist/release/file-format-schema.json) with ajv, and print per-profile weight sums.
// usage: node speedscope_check.mjs FILE...   One JSON line per file:
//   {"file", "valid", "errors", "profiles": [{"name", "unit", "sum", "samples"}], "frames"}
// Sums are exact integers (BigInt over the weights' text), not doubles.
import Ajv from "ajv";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);
const pkg = dirname(require.resolve("speedscope/package.json"));
const schema = JSON.parse(readFileSync(join(pkg, "dist/release/file-format-schema.json"), "utf8"));
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile({ ...schema, $ref: "#/definitions/FileFormat.File" });
let bad = 0;
for (const file of process.argv.slice(2)) {
	const text = readFileSync(file, "utf8");
	const doc = JSON.parse(text);
	const valid = validate(doc);
	if (!valid) bad++;
	// Exact sums: re-read the weights arrays' digits rather than trusting doubles past 2^53.
	const sums = [...text.matchAll(/"weights":\[([0-9,]*)\]/g)].map((m) =>
		m[1] ? m[1].split(",").reduce((a, b) => a + BigInt(b), 0n) : 0n);
	const frameCount = doc.shared.frames.length;
	const inRange = doc.profiles.every((p) => p.samples.every((s) => s.every((i) => Number.isInteger(i) && i >= 0 && i < frameCount)));
	console.log(JSON.stringify({
		file, valid: valid && inRange, errors: valid ? (inRange ? [] : ["frame index out of range"]) : validate.errors.slice(0, 5),
		frames: frameCount,
		profiles: doc.profiles.map((p, i) => ({ name: p.name, unit: p.unit, sum: String(sums[i]), samples: p.samples.length,
			endValue: p.endValue, weightsMatchSamples: p.weights.length === p.samples.length })),
	}));
}
process.exit(bad ? 1 : 0);
