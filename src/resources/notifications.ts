import type { ReferralNotification } from '../api/types.js';
import { peopleTime } from '../util/time.js';
import { defineResource } from './schema.js';

// At a narrow terminal (output/table.ts) every cell is whole (times, enumerations, ids); the
// least read columns (created, the notification's id, then the visit) are left out first.
export const NOTIFICATIONS = defineResource<ReferralNotification>(
  {
    id: true,
    channel: true,
    notification_type: true,
    status: true,
    created_at: true,
    updated_at: true,
    visit_id: true,
  },
  [
    { header: 'Updated', field: 'updated_at', show: (v) => peopleTime(v), priority: 1, fit: 'keep' },
    { header: 'Channel', field: 'channel', priority: 2, fit: 'keep' },
    { header: 'Type', field: 'notification_type', priority: 3, fit: 'keep' },
    { header: 'Status', field: 'status', priority: 4, fit: 'keep' },
    { header: 'Visit', field: 'visit_id', show: (v) => v ?? '-', priority: 5, fit: 'keep' },
    { header: 'Created', field: 'created_at', show: (v) => peopleTime(v), priority: 7, fit: 'keep' },
    { header: 'ID', field: 'id', priority: 6, fit: 'keep' },
  ],
);
