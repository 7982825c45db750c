// npm publish's prepublishOnly: the name partner-imaging-cli on the public registry is not ours, so
// the package is never published by accident; IMAGING_PUBLISH=yes for a deliberate publish.
if (process.env.IMAGING_PUBLISH !== 'yes') {
  console.error(
    'error: npm publish is refused: the package name is not registered by us. Set IMAGING_PUBLISH=yes to publish on purpose.',
  );
  process.exit(1);
}
