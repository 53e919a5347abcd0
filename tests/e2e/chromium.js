// Headless Chromium for the browser tests: finding it, and running it on
// one URL. Debian's package is `chromium`; REPROX_CHROMIUM names another
// binary.
'use strict';
const { execFile, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

// The Chromium binary's path, or null when none is installed.
function findChromium() {
  const names = process.env.REPROX_CHROMIUM ? [process.env.REPROX_CHROMIUM]
                                            : ['chromium', 'chromium-browser', 'google-chrome'];
  for (const name of names) {
    try {
      return execFileSync('sh', ['-c', `command -v "${name}"`]).toString().trim() || null;
    } catch (e) { /* not this one */ }
  }
  return null;
}

// Runs headless Chromium on `url` with `flags` in a fresh profile; resolves
// with its stdout. --virtual-time-budget lets the page's timers run 5 s of
// virtual time, waiting for each fetch.
function runChromium(chromium, url, flags) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'reprox-chromium-'));
  const args = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
                '--disable-extensions', '--hide-scrollbars', `--user-data-dir=${profile}`,
                '--virtual-time-budget=5000', ...flags, url];
  return new Promise((resolve, reject) => {
    execFile(chromium, args, { timeout: 60000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      fs.rmSync(profile, { recursive: true, force: true });
      if (err) reject(new Error(`chromium failed: ${err.message}\n${stderr.slice(-2000)}`));
      else resolve(stdout);
    });
  });
}

module.exports = { findChromium, runChromium };
