package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// TrustFileName is the file beside the user config that lists the folders
// whose project config dsh applies in full. It lives in the dsh home, which
// a project file cannot move, so a project can never mark itself trusted.
const TrustFileName = "trusted-folders.json"

// maxTrustFileBytes bounds what reading the trust file may allocate.
const maxTrustFileBytes = 1 << 20

// TrustStore is the list of trusted folders kept in one dsh home. The zero
// value is unusable; use OpenTrust.
type TrustStore struct {
	path string
}

// OpenTrust returns the trust store of the dsh home home. Nothing is read
// until a method needs it.
func OpenTrust(home string) TrustStore {
	return TrustStore{path: filepath.Join(home, TrustFileName)}
}

// Path is the trust file's path.
func (t TrustStore) Path() string { return t.path }

type trustFile struct {
	// Folders are canonical (absolute, symlink-free) directory paths.
	Folders []string `json:"folders"`
}

// Folders returns the trusted folders, sorted; a missing file means none.
func (t TrustStore) Folders() ([]string, error) {
	f, err := t.read()
	if err != nil {
		return nil, err
	}
	return f.Folders, nil
}

// Trusted reports whether dir (made canonical first) is a trusted folder.
// Trust is per folder: a trusted parent does not trust its subfolders, whose
// .dsh/config.yaml may come from someone else (a vendored checkout).
func (t TrustStore) Trusted(dir string) (bool, error) {
	folders, err := t.Folders()
	if err != nil || len(folders) == 0 {
		return false, err
	}
	canon, err := canonicalDir(dir)
	if err != nil {
		// A folder that cannot be resolved cannot have been trusted.
		return false, nil
	}
	return slices.Contains(folders, canon), nil
}

// Add trusts dir and returns its canonical path. dir must be an existing
// directory.
func (t TrustStore) Add(dir string) (string, error) {
	canon, err := canonicalDir(dir)
	if err != nil {
		return "", err
	}
	f, err := t.read()
	if err != nil {
		return "", err
	}
	if slices.Contains(f.Folders, canon) {
		return canon, nil
	}
	f.Folders = append(f.Folders, canon)
	slices.Sort(f.Folders)
	return canon, t.write(f)
}

// Remove stops trusting dir and reports whether it was trusted. A folder
// that no longer exists is matched by its absolute path.
func (t TrustStore) Remove(dir string) (bool, error) {
	canon, err := canonicalDir(dir)
	if err != nil {
		if canon, err = filepath.Abs(dir); err != nil {
			return false, err
		}
	}
	f, err := t.read()
	if err != nil {
		return false, err
	}
	i := slices.Index(f.Folders, canon)
	if i < 0 {
		return false, nil
	}
	f.Folders = slices.Delete(f.Folders, i, i+1)
	return true, t.write(f)
}

func (t TrustStore) read() (trustFile, error) {
	var f trustFile
	fh, err := os.Open(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("cannot read the trusted folders file: %w", err)
	}
	defer fh.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(fh, maxTrustFileBytes+1)); err != nil {
		return f, fmt.Errorf("cannot read the trusted folders file %s: %w", t.path, err)
	}
	if buf.Len() > maxTrustFileBytes {
		return f, fmt.Errorf("the trusted folders file %s is larger than %d bytes; fix or delete it", t.path, maxTrustFileBytes)
	}
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("the trusted folders file %s is not valid (%v); fix it, or delete it and trust your folders again with dsh trust", t.path, err)
	}
	for _, d := range f.Folders {
		if !filepath.IsAbs(d) {
			return f, fmt.Errorf("the trusted folders file %s lists %q, which is not an absolute path; fix or delete it", t.path, d)
		}
	}
	slices.Sort(f.Folders)
	return f, nil
}

// write replaces the trust file atomically, private to the user.
func (t TrustStore) write(f trustFile) error {
	if f.Folders == nil {
		f.Folders = []string{}
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	dir := filepath.Dir(t.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create the dsh home %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, TrustFileName+".*.tmp")
	if err != nil {
		return fmt.Errorf("cannot write the trusted folders file: %w", err)
	}
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), t.path)
	}
	if werr != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("cannot write the trusted folders file %s: %w", t.path, werr)
	}
	return nil
}

// canonicalDir is dir made absolute with every symlink resolved; it must be
// an existing directory.
func canonicalDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("cannot resolve %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("cannot resolve %s: %w", dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	return real, nil
}
