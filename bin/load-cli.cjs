'use strict';
// Loads dist/cli.cjs with a plain require: no code cache of any kind (issue 13).
//
// This file used to compile the bundle through vm.Script with a V8 code cache of a whole run, saved
// per command in the user's cache folder (~4-5 ms CPU of a ~52 ms lookup on Node 24). A code cache
// is executable: whoever can write it runs code as the user, and V8 checks little more than its
// header and the length of the source. A damaged file crashed every run of the command; a file
// planted through a writable parent folder, a symlink race or a predictable temporary name ran
// another user's code. Doing it safely needs ownership checks of every ancestor, O_NOFOLLOW opens
// and a SHA-256 of the cache and the bundle (node:crypto, which a lookup does not otherwise load),
// which eat most of what it saved; so it is gone. See README "Speed".

/** Returns the CLI module's exports, and a function to call once the command has finished. */
module.exports = function loadCli(_args) {
  return { cli: require('../dist/cli.cjs'), done() {} };
};
