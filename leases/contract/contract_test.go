package contract_test

import (
	"testing"

	"steward/leases/contract"
	"steward/leases/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestSQLite runs the contract against the embedded backend.
func TestSQLite(t *testing.T) { contract.Run(t, contract.SQLite()) }

// TestPostgres runs the contract against a real PostgreSQL server started by the test.
func TestPostgres(t *testing.T) { contract.Run(t, contract.Postgres()) }
