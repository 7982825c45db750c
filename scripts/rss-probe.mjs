// Loaded with `node --import` by the bench: writes the process's peak resident set size (bytes)
// to the file named by IMAGING_RSS_FILE when it exits.
import { writeFileSync } from 'node:fs';

const file = process.env.IMAGING_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS * 1024)));
