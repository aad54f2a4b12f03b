// png_pixels.mjs - the colours of a PNG file at given points, for the
// flame graph test: rsvg-convert draws icppd's SVG, this says what the
// picture holds there.  Reads 8-bit RGB or RGBA, not interlaced (what
// rsvg-convert and chromium write), with node's own zlib.
// Usage: node png_pixels.mjs FILE X,Y...  prints "#rrggbb" per point,
// one a line, after "WIDTHxHEIGHT".
import { readFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';

const [file, ...points] = process.argv.slice(2);
const buf = readFileSync(file);
let width = 0, height = 0, channels = 0;
const idat = [];
for (let at = 8; at < buf.length;) {
  const len = buf.readUInt32BE(at), type = buf.toString('latin1', at + 4, at + 8);
  const data = buf.subarray(at + 8, at + 8 + len);
  if (type === 'IHDR') {
    width = data.readUInt32BE(0);
    height = data.readUInt32BE(4);
    const depth = data[8], colour = data[9], interlace = data[12];
    if (depth !== 8 || interlace !== 0 || (colour !== 2 && colour !== 6))
      throw new Error(`png_pixels: unsupported PNG (depth ${depth}, colour ${colour})`);
    channels = colour === 6 ? 4 : 3;
  } else if (type === 'IDAT') {
    idat.push(data);
  }
  at += 12 + len;
}
const raw = inflateSync(Buffer.concat(idat)), stride = width * channels;
const img = Buffer.alloc(height * stride);
for (let y = 0; y < height; y++) {
  const f = raw[y * (stride + 1)], src = y * (stride + 1) + 1, dst = y * stride;
  for (let x = 0; x < stride; x++) {
    const a = x >= channels ? img[dst + x - channels] : 0;
    const b = y > 0 ? img[dst - stride + x] : 0;
    const c = x >= channels && y > 0 ? img[dst - stride + x - channels] : 0;
    let v = raw[src + x];
    if (f === 1) v += a;
    else if (f === 2) v += b;
    else if (f === 3) v += (a + b) >> 1;
    else if (f === 4) {
      const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
      v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    }
    img[dst + x] = v & 255;
  }
}
console.log(`${width}x${height}`);
for (const p of points) {
  const [x, y] = p.split(',').map(Number), at = y * stride + x * channels;
  console.log('#' + [0, 1, 2].map((i) => img[at + i].toString(16).padStart(2, '0')).join(''));
}
