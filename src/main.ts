import { type Command, CommanderError } from 'commander';
import { Context, type ContextDeps, processIO } from './context.js';
import {
  ApiError,
  ExitCode,
  exitCodeOf,
  formatError,
  InterruptedError,
  STOP_SIGNALS,
  type StopSignal,
  stopExitCode,
  type TokenOrigin,
} from './errors.js';
import { colorLevel, type IO } from './io.js';
import { HumanStream, joinSafe, paint, type SafeText, safe } from './output/text.js';
import { buildProgram, noColorGiven } from './program.js';
import { runForcedExitTasks } from './util/cleanup.js';

// argv -> Context -> handler -> exit code; the one place an error becomes its message and exit code.

export interface MainDeps extends Partial<Omit<ContextDeps, 'globals'>> {
  io?: IO;
  env?: NodeJS.ProcessEnv;
}

export async function main(argv: string[], deps: MainDeps = {}): Promise<number> {
  let received: StopSignal | undefined;
  const io = deps.io ?? processIO(() => (received ? stopExitCode(received) : undefined));
  const env = deps.env ?? process.env;
  let exitCode: number = ExitCode.ok;
  let ctx: Context | undefined;
  let program: Command | undefined;
  const controller = new AbortController();
  const signal = deps.signal ?? controller.signal;
  let finished = false;
  const onSignal = (sig: StopSignal) => {
    if (received || finished) {
      // A second signal, or one after the command is done: stop now, but still leave no partial
      // file behind (the exit code is 128 + this signal's number).
      runForcedExitTasks();
      process.exit(stopExitCode(sig));
    }
    received = sig;
    controller.abort(new InterruptedError(sig));
  };
  // Every stop signal: requests stop, temporary files go, exit 128 + the signal's number.
  const handlers = STOP_SIGNALS.map((sig) => [sig, () => onSignal(sig)] as const);
  const ownSignals = !deps.signal && !deps.io;
  if (ownSignals) for (const [sig, handler] of handlers) process.on(sig, handler);

  try {
    program = buildProgram(io, async (def, args, opts, globals) => {
      ctx = new Context({ ...deps, io, env, globals, signal, argv, formats: def.formats });
      exitCode = (await def.run(ctx, args as string[], opts)) ?? ExitCode.ok;
      if (exitCode === ExitCode.ok) ctx.commitCache();
    });
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and --version exit 0; every parse error is a usage error (exit 2).
      exitCode = err.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    } else {
      const interrupted = received !== undefined || err instanceof InterruptedError;
      if (interrupted) {
        if (received) exitCode = stopExitCode(received);
        else exitCode = (err as InterruptedError).exitCode;
        if (!(err instanceof InterruptedError && err.quiet)) {
          const out = new HumanStream(io.stderr, io.stderrIsTTY ? io.errColumns : undefined);
          out.write('\ninterrupted\n');
          if (ctx?.interruptNote) out.line(ctx.interruptNote);
        }
      } else {
        // A refused token's hint says what to do about the token where it came from.
        const token = err instanceof ApiError && err.status === 401 && ctx ? tokenOrigin(ctx) : undefined;
        const shown = token ? (err as ApiError).withToken(token) : err;
        exitCode = exitCodeOf(shown);
        const verbose = Boolean(ctx?.globals.verbose);
        // Wrapped to the terminal's width first (never mid-word), then coloured.
        const block = new HumanStream(io.stderr, io.stderrIsTTY ? io.errColumns : undefined);
        // A parser error comes before any Context: coloured by the same rule, from what was parsed.
        const colour = ctx
          ? ctx.colorLevel('stderr') > 0
          : colorLevel(io, env, program !== undefined && noColorGiven(program), 'stderr') > 0;
        block.write(await colourError(block.fit(formatError(shown, { verbose })), colour));
      }
    }
  } finally {
    ctx?.close();
    // The handlers stay: a signal while the process winds down (sockets closing) must not kill it
    // with the default action (no exit code, no cleanup); it exits at once with 128 + its number.
    finished = true;
  }
  if (received && exitCode === ExitCode.ok) exitCode = stopExitCode(received);
  // Stopped by a signal: leave now rather than through Node's teardown, during which a second
  // Ctrl-C meets no handler and kills the process with no exit code.
  if (received && ownSignals) process.exit(exitCode);
  return exitCode;
}

/** Where the token of the command's environment came from (for the hint of a refused one). */
function tokenOrigin(ctx: Context): TokenOrigin | undefined {
  try {
    const env = ctx.environment().value;
    return { source: ctx.token(env).source, env };
  } catch {
    return undefined;
  }
}

// chalk is loaded only when colour is on; formatError has already cleaned the block.
async function colourError(text: string, on: boolean): Promise<SafeText> {
  const chalk = on ? new (await import('chalk')).Chalk({ level: 1 }) : undefined;
  let hinted = false;
  const lines = text.split('\n').map((line) => {
    if (line.startsWith('error:'))
      return safe`${chalk ? paint(chalk.red.bold, 'error:') : 'error:'}${line.slice(6)}`;
    if (!hinted && line.startsWith('hint:')) {
      hinted = true;
      return safe`${chalk ? paint(chalk.yellow, 'hint:') : 'hint:'}${line.slice(5)}`;
    }
    return line;
  });
  return safe`${joinSafe(lines, '\n')}\n`;
}
