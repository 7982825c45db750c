// Loaded with `node --import` by the bench and the memory tests: writes the process's peak resident
// set size (bytes) to the file named by IMAGING_RSS_FILE when it exits. On Linux it is VmHWM, the
// peak of this program's own memory: getrusage's maxRSS also counts the parent's memory at the fork
// that started it (Linux keeps it across exec), which a large test runner would add.
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.env.IMAGING_RSS_FILE;
const peak = () => {
  try {
    const kb = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (kb) return Number(kb) * 1024;
  } catch {}
  return process.resourceUsage().maxRSS * 1024;
};
if (file) process.on('exit', () => writeFileSync(file, String(peak())));
