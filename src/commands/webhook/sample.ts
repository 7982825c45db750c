import { defineCommand } from '../../cli/define.js';
import { arg, pairs } from '../../cli/options.js';
import { safe } from '../../output/text.js';
import { EVENT_NAMES } from '../../webhook/events.js';

// The bare body `webhook send` would sign, for `webhook sign --body` and a receiver's own tests.
export default defineCommand({
  path: ['webhook', 'sample'],
  formats: ['json'],
  description:
    'Prints the exact JSON body, one line, of the event `webhook send` would deliver (fresh ids, the time now); sign those bytes with `webhook sign --body`.',
  args: [arg('<event>', `the event: ${EVENT_NAMES.join(', ')}`, { values: EVENT_NAMES })],
  options: {
    set: pairs(
      '--set <path=value>',
      'change a field: referral.visits.0.status=booked (repeatable; JSON values)',
    ),
  },
  examples: [
    'imaging webhook sample visit.status_changed > body.json',
    'imaging webhook sign --body body.json --secret-file secret.txt --curl http://127.0.0.1:4030/',
    'imaging webhook sample notification.status_changed --set status=opened',
  ],
  async run(ctx, [eventArg], opts) {
    const { parseEventName, sampleWithSet } = await import('../../webhook/sample.js');
    const name = parseEventName(eventArg);
    const { body, problems } = sampleWithSet(name, ctx.now(), opts.set ?? []);
    for (const p of problems) ctx.note(safe`warning: after --set, ${p} (printed as asked)`);
    // The bytes as sent, then a newline: a file written from here signs and verifies as it is.
    ctx.io.stdout.write(Buffer.concat([body, Buffer.from('\n')]));
    return 0;
  },
});
