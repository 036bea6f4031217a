-- steward migration 0003: the supervised system compares lease statuses
-- lower-cased (seed: status.strip().lower()), so steward looks active leases up
-- by the folded status. This expression index serves those lookups (ReadScope,
-- Claim) on a DB steward created; the expression is exactly foldSQL("status")
-- in leases/rows.go. A DB steward did not create gets no index: steward never
-- alters another's schema.

CREATE INDEX IF NOT EXISTS leases_item_active
    ON leases (work_item_id, lower(trim(status, char(9, 10, 11, 12, 13, 32))));
