import { defineCommand } from '../../cli/define.js';
import { arg, flag } from '../../cli/options.js';
import { UsageError } from '../../errors.js';
import { clean, safe } from '../../output/text.js';
import { sandboxEnvironment, sandboxRoute, sendSandbox, writeAnswer } from '../../sandbox/tools.js';

export default defineCommand({
  path: ['sandbox', 'fixture'],
  formats: ['json'],
  description:
    'Asks the sandbox for a fixture: synthetic data made by name (the server decides which names it knows; the emulator knows referral, ready_to_book, booked, report_uploaded and two_visits). Sends {"name": NAME} (or {} without a name) to path.sandbox_fixture (default POST /api/v2/sandbox/fixtures; the path and body are not published: set the path with imaging config set path.sandbox_fixture). Prints the answer as JSON. Sandbox and local only.',
  args: [arg('[name]', 'the fixture to make (the server names the ones it has)')],
  options: {
    dryRun: flag('--dry-run', 'show the request and send nothing'),
  },
  examples: ['imaging sandbox fixture booked', 'imaging sandbox fixture two_visits --dry-run'],
  async run(ctx, [name], opts) {
    const env = sandboxEnvironment(ctx, 'fixture');
    const given = name?.trim();
    if (name !== undefined && !given) throw new UsageError('the fixture name is empty');
    const route = sandboxRoute(ctx, env, 'sandbox_fixture');
    const res = await sendSandbox(ctx, route, given ? { name: given } : {}, { dryRun: Boolean(opts.dryRun) });
    if (!res) return 0;
    await writeAnswer(ctx, res);
    const made = res.data as { id?: unknown; reference?: unknown } | null;
    if (made && typeof made === 'object' && typeof made.id === 'string')
      ctx.note(
        safe`Made fixture ${clean(given ?? '(default)')}: ${clean(made.reference ?? '')} ${clean(made.id)}`,
      );
    return 0;
  },
});
