// Stages the two npm packages pack.sh packs, from a checkout and one binary:
//   node npm/stage.mjs --binary PATH --platform KEY --out DIR
// writes DIR/platform (precompressor-KEY: package.json, README, bin/precompress[.exe])
// and DIR/main (precompressor), both stamped with the version in Cargo.toml,
// and prints their paths, one a line. The binary's format and architecture are
// read from its header, so a release job cannot publish an x64 binary as
// arm64; when it is for this machine it also runs it to compare --version.

import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { GLIBC_BASELINE, PLATFORMS, packageName } from './precompressor/lib/platforms.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.dirname(here);

function die(msg) {
  process.stderr.write(`stage: ${msg}\n`);
  process.exit(1);
}

const { values: args } = parseArgs({
  options: {
    binary: { type: 'string' },
    platform: { type: 'string', default: '' },
    out: { type: 'string' },
  },
});
if (!args.binary || !args.out) die('usage: node npm/stage.mjs --binary PATH [--platform OS-CPU] --out DIR');

/** `version` (and `repository`, if set) of Cargo.toml's [package]. */
function cargoPackage(toml) {
  const section = toml.match(/^\[package\][^\n]*\n([\s\S]*?)(?=^\[|(?![\s\S]))/m)?.[1] ?? '';
  const key = (k) => section.match(new RegExp(`^${k}\\s*=\\s*"([^"]*)"`, 'm'))?.[1];
  return { version: key('version'), repository: key('repository') };
}

const cargo = cargoPackage(readFileSync(path.join(repo, 'Cargo.toml'), 'utf8'));
if (!cargo.version || !/^\d+\.\d+\.\d+(-[\w.]+)?(\+[\w.]+)?$/.test(cargo.version)) {
  die(`no semver version in Cargo.toml's [package] (found ${JSON.stringify(cargo.version)})`);
}
const version = cargo.version;

const host = `${process.platform}-${process.arch}`;
const key = args.platform || host;
const platform = PLATFORMS[key];
if (!platform) die(`unknown platform ${JSON.stringify(key)}; the packages are ${Object.keys(PLATFORMS).join(', ')}`);

// What the binary's header says it is: [os, cpu] in process.platform/arch terms.
function binaryKind(buf) {
  const u16 = (o) => buf.readUInt16LE(o);
  const u32 = (o) => buf.readUInt32LE(o);
  if (buf.length >= 20 && buf.readUInt32BE(0) === 0x7f454c46) {
    const cpu = { 62: 'x64', 183: 'arm64' }[u16(18)];
    return ['linux', cpu ?? `elf machine ${u16(18)}`];
  }
  if (buf.length >= 8 && u32(0) === 0xfeedfacf) {
    const cpu = { 0x01000007: 'x64', 0x0100000c: 'arm64' }[u32(4)];
    return ['darwin', cpu ?? `mach-o cputype ${u32(4)}`];
  }
  if (buf.length >= 8 && buf.readUInt32BE(0) === 0xcafebabe) return ['darwin', 'universal'];
  if (buf.length >= 0x40 && u16(0) === 0x5a4d) {
    const pe = u32(0x3c);
    if (buf.length >= pe + 6 && u32(pe) === 0x4550) {
      const cpu = { 0x8664: 'x64', 0xaa64: 'arm64' }[u16(pe + 4)];
      return ['win32', cpu ?? `pe machine ${u16(pe + 4)}`];
    }
  }
  return ['unknown', 'unknown'];
}

let bytes;
try {
  bytes = readFileSync(args.binary);
} catch (e) {
  die(`cannot read the binary ${args.binary}: ${e.message}`);
}
const [os, cpu] = binaryKind(bytes);
if (os !== platform.os || (cpu !== platform.cpu && cpu !== 'universal')) {
  die(`${args.binary} is a ${os}-${cpu} binary, not ${key} (set NPM_PLATFORM to what it is built for)`);
}
if (key === host) {
  const out = execFileSync(args.binary, ['--version'], { encoding: 'utf8' }).trim();
  if (out !== `precompress ${version}`) die(`${args.binary} --version says ${JSON.stringify(out)}, Cargo.toml says ${version}: a stale binary?`);
}

const out = path.resolve(args.out);
const licences = readdirSync(repo).filter((f) => /^(licen[cs]e|copying)/i.test(f));
const copyLicences = (dir) => licences.forEach((f) => copyFileSync(path.join(repo, f), path.join(dir, f)));
const write = (file, text) => writeFileSync(file, text.endsWith('\n') ? text : `${text}\n`);

// The platform package, from npm/platform's templates.
const platformDir = path.join(out, 'platform');
mkdirSync(path.join(platformDir, 'bin'), { recursive: true });
const fill = (s) =>
  s
    .replaceAll('OS-CPULIBC', platform.libc ? `${key} (${platform.libc} ${GLIBC_BASELINE}+)` : key)
    .replaceAll('OS-CPU', key)
    .replaceAll('VERSION', version);
const template = JSON.parse(readFileSync(path.join(here, 'platform', 'package.json'), 'utf8'));
const { files, preferUnplugged, ...head } = template;
const pj = {
  ...head,
  name: packageName(key),
  version,
  description: fill(template.description),
  ...(cargo.repository ? { repository: { type: 'git', url: cargo.repository } } : {}),
  os: [platform.os],
  cpu: [platform.cpu],
  ...(platform.libc ? { libc: [platform.libc] } : {}),
  // npm packs LICENSE and LICENSE.md by itself, not LICENSE-MIT: list them.
  files: [...files, ...licences],
  preferUnplugged,
};
write(path.join(platformDir, 'package.json'), JSON.stringify(pj, null, 2));
write(path.join(platformDir, 'README.md'), fill(readFileSync(path.join(here, 'platform', 'README.md'), 'utf8')));
const exe = path.join(platformDir, 'bin', platform.exe);
copyFileSync(args.binary, exe);
chmodSync(exe, 0o755);
copyLicences(platformDir);

// The main package: npm/precompressor without its tests, stamped.
const mainDir = path.join(out, 'main');
const src = path.join(here, 'precompressor');
mkdirSync(mainDir, { recursive: true });
const main = JSON.parse(readFileSync(path.join(src, 'package.json'), 'utf8'));
// What package.json's `files` ships, and the README: one list, not two.
for (const f of [...main.files, 'README.md']) {
  cpSync(path.join(src, f), path.join(mainDir, f), { recursive: true });
}
main.version = version;
main.files = [...main.files, ...licences];
main.optionalDependencies = Object.fromEntries(Object.keys(PLATFORMS).map((k) => [packageName(k), version]));
delete main.scripts;
if (cargo.repository) main.repository = { type: 'git', url: cargo.repository };
write(path.join(mainDir, 'package.json'), JSON.stringify(main, null, 2));
chmodSync(path.join(mainDir, 'bin', 'precompress.js'), 0o755);
copyLicences(mainDir);

process.stdout.write(`${platformDir}\n${mainDir}\n`);
