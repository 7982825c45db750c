import { join } from 'node:path';

/** `IMAGING_CONFIG_DIR`, else the OS config directory as env-paths would choose it. */
export function configDir(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string {
  const explicit = env.IMAGING_CONFIG_DIR;
  if (explicit && explicit.trim() !== '') return explicit;
  const home = env.HOME || env.USERPROFILE || process.getBuiltinModule('node:os').homedir();
  if (platform === 'darwin') return join(home, 'Library', 'Preferences', 'imaging');
  if (platform === 'win32') {
    const appData = env.APPDATA || join(home, 'AppData', 'Roaming');
    return join(appData, 'imaging', 'Config');
  }
  const xdg =
    env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.trim() !== '' ? env.XDG_CONFIG_HOME : join(home, '.config');
  return join(xdg, 'imaging');
}

export const CONFIG_FILE_NAME = 'config.json';
