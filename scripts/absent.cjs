// Stands in, in the bundles, for an optional package that the tool does not install (debug's
// supports-color, proxy-agent-negotiate's kerberos): each is loaded in a try, and left to Node it
// would be searched for in every parent folder's node_modules, where anyone may have put one.
throw Object.assign(new Error('this optional package is not part of imaging'), { code: 'MODULE_NOT_FOUND' });
