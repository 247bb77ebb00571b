package store

import (
	"go/build"
	"strings"
	"testing"
)

// TestStoreDoesNotImportTheProviderSeam pins the store's dependencies: it
// reads logged model streams through host/stream, never through host/llm
// (the provider seam, with the tool registry behind it) or a provider.
func TestStoreDoesNotImportTheProviderSeam(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if strings.Contains(imp, "/dsh/host/llm") || strings.Contains(imp, "/dsh/host/tools") {
			t.Errorf("host/store imports %s", imp)
		}
	}
}
