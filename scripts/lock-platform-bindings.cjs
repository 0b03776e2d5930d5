// npm drops lock entries for optional platform packages that its registry does not serve (this machine's
// mirror carries only some of unrs-resolver's bindings), and `npm ci` then refuses the lock as out of sync.
// Run after any `npm install`: node scripts/lock-platform-bindings.cjs package-lock.json
const fs = require('fs')
const file = process.argv[2]
const lock = JSON.parse(fs.readFileSync(file, 'utf8'))
const version = lock.packages['node_modules/unrs-resolver'].version
const platforms = {
  'android-arm-eabi': ['android', 'arm'],
  'android-arm64': ['android', 'arm64'],
  'darwin-arm64': ['darwin', 'arm64'],
  'darwin-x64': ['darwin', 'x64'],
  'freebsd-x64': ['freebsd', 'x64'],
  'linux-arm-gnueabihf': ['linux', 'arm', 'glibc'],
  'linux-arm-musleabihf': ['linux', 'arm', 'musl'],
  'linux-loong64-gnu': ['linux', 'loong64', 'glibc'],
  'linux-loong64-musl': ['linux', 'loong64', 'musl'],
  'linux-ppc64-gnu': ['linux', 'ppc64', 'glibc'],
  'linux-riscv64-gnu': ['linux', 'riscv64', 'glibc'],
  'linux-riscv64-musl': ['linux', 'riscv64', 'musl'],
  'linux-s390x-gnu': ['linux', 's390x', 'glibc'],
  'openharmony-arm64': ['openharmony', 'arm64'],
  'win32-arm64-msvc': ['win32', 'arm64'],
  'win32-ia32-msvc': ['win32', 'ia32'],
  'win32-x64-msvc': ['win32', 'x64']
}
const packages = {}
for (const [key, value] of Object.entries(lock.packages)) {
  packages[key] = value
}
for (const [name, [os, cpu, libc]] of Object.entries(platforms)) {
  const key = `node_modules/@unrs/resolver-binding-${name}`
  if (packages[key]) continue
  packages[key] = { version, cpu: [cpu], dev: true, ...(libc ? { libc: [libc] } : {}), license: 'MIT', optional: true, os: [os] }
}
const sorted = {}
for (const key of Object.keys(packages).sort((a, b) => a === '' ? -1 : b === '' ? 1 : a.localeCompare(b, 'en'))) sorted[key] = packages[key]
lock.packages = sorted
fs.writeFileSync(file, JSON.stringify(lock, null, 2) + '\n')
