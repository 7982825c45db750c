import { defineCommand } from '../../cli/define.js';
import { completes, flag, text } from '../../cli/options.js';
import { clean, safe } from '../../output/text.js';
import { sandboxEnvironment, sandboxRoute, sendSandbox, writeAnswer } from '../../sandbox/tools.js';
import { EVENT_NAMES } from '../../webhook/events.js';
import { parseEventName } from '../../webhook/sample.js';

export default defineCommand({
  path: ['sandbox', 'test-webhook'],
  formats: ['json'],
  description:
    'Asks the sandbox to send a test event to your group\'s webhook URL, signed as every delivery is (imaging webhook listen shows and verifies it). Sends {"event_name": NAME} (or {} without --event: the server\'s choice) to path.sandbox_test_webhook (default POST /api/v2/sandbox/test_webhook; the path and body are not published: set the path with imaging config set path.sandbox_test_webhook). Sandbox and local only.',
  options: {
    event: completes(text('--event <name>', `the event: ${EVENT_NAMES.join(', ')}`), EVENT_NAMES),
    dryRun: flag('--dry-run', 'show the request and send nothing'),
  },
  examples: [
    'imaging sandbox test-webhook',
    'imaging sandbox test-webhook --event notification.status_changed --dry-run',
  ],
  async run(ctx, _args, opts) {
    const env = sandboxEnvironment(ctx, 'test-webhook');
    const event = opts.event === undefined ? undefined : parseEventName(opts.event);
    const route = sandboxRoute(ctx, env, 'sandbox_test_webhook');
    const body = event ? { event_name: event } : {};
    const res = await sendSandbox(ctx, route, body, { dryRun: Boolean(opts.dryRun) });
    if (!res) return 0;
    await writeAnswer(ctx, res);
    ctx.note(safe`Asked for a test ${clean(event ?? 'event')}: it goes to your group's webhook URL.`);
    return 0;
  },
});
