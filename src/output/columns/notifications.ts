import type { ReferralNotification } from '../../api/types.js';
import type { Column } from '../render.js';

// At a narrow terminal (output/table.ts) every cell is whole (times, enumerations, ids); the
// least read columns (created, the notification's id, then the visit) are left out first.
export const notificationColumns: Column<ReferralNotification>[] = [
  { header: 'Updated', get: (r) => r.updated_at, priority: 1, fit: 'keep' },
  { header: 'Channel', get: (r) => r.channel, priority: 2, fit: 'keep' },
  { header: 'Type', get: (r) => r.notification_type, priority: 3, fit: 'keep' },
  { header: 'Status', get: (r) => r.status, priority: 4, fit: 'keep' },
  { header: 'Visit', get: (r) => r.visit_id ?? '-', priority: 5, fit: 'keep' },
  { header: 'Created', get: (r) => r.created_at, priority: 7, fit: 'keep' },
  { header: 'ID', get: (r) => r.id, priority: 6, fit: 'keep' },
];

/** Fields a table shows as text: checked before a table is drawn. */
export const NOTIFICATION_TEXT = [
  'id',
  'channel',
  'notification_type',
  'status',
  'created_at',
  'updated_at',
  'visit_id',
];
