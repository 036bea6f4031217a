package contract

import (
	"os"
	"testing"

	"steward/gitea/giteatest"
)

func TestMain(m *testing.M) { os.Exit(giteatest.Main(m)) }

func TestContractFake(t *testing.T) {
	t.Parallel()
	runContract(t, ContractEnv{Name: "fake", NewBackend: NewFakeBackend})
}

func TestContractRealGitea(t *testing.T) {
	t.Parallel()
	runContract(t, ContractEnv{Name: "real", NewBackend: func(t testing.TB) Backend {
		return NewRealBackend(t, giteatest.Shared(t))
	}})
}
