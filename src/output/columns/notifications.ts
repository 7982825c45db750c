import type { ReferralNotification } from '../../api/types.js';
import type { Column } from '../render.js';

export const notificationColumns: Column<ReferralNotification>[] = [
  { header: 'Updated', get: (r) => r.updated_at },
  { header: 'Channel', get: (r) => r.channel },
  { header: 'Type', get: (r) => r.notification_type },
  { header: 'Status', get: (r) => r.status },
  { header: 'Visit', get: (r) => r.visit_id ?? '-' },
  { header: 'Created', get: (r) => r.created_at },
  { header: 'ID', get: (r) => r.id },
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
