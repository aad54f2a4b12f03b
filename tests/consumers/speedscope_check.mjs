// speedscope_check reads a folded file the way speedscope reads one: it
// takes speedscope's collapsed-stack parser out of the release bundle
// that npm installed (the function that matches each line against
// /^(.*) (\d+)$/ and drops the lines that do not match), runs it under
// node, and prints what tests/e2e/exports.sh compares with icppd's own
// numbers: "lines N", "kept N", "total N".
//
// Usage: node speedscope_check.mjs SPEEDSCOPE_PACKAGE_DIR FOLDED_FILE
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const [pkg, file] = process.argv.slice(2);
const dir = join(pkg, 'dist', 'release');
const bundle = readdirSync(dir).find((f) => /^speedscope-.*\.js$/.test(f));
if (!bundle) {
	console.error(`no speedscope bundle in ${dir}`);
	process.exit(1);
}
const src = readFileSync(join(dir, bundle), 'utf8');
const at = src.indexOf('=/^(.*) (\\d+)$/gm.exec(');
const start = at < 0 ? -1 : src.lastIndexOf('function ', at);
if (start < 0) {
	console.error(`${bundle}: speedscope's collapsed-stack parser not found`);
	process.exit(1);
}
// the function's text: from "function" to its matching closing brace
let depth = 0, end = src.indexOf('{', start);
for (; end < src.length; end++) {
	if (src[end] === '{') depth++;
	else if (src[end] === '}' && --depth === 0) break;
}
const parse = new Function(`return (${src.slice(start, end + 1)})`)();
const text = readFileSync(file, 'utf8');
const lines = text.split('\n').filter((l) => l.length > 0);
const samples = parse({ splitLines: () => text.split('\n') });
const total = samples.reduce((s, x) => s + x.duration, 0);
console.log(`lines ${lines.length}`);
console.log(`kept ${samples.length}`);
console.log(`total ${total}`);
