package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFigureFiles(t *testing.T) {
	f := Figure{Name: "fig", Title: "t", XLabel: "x", YLabel: "y", Series: []Series{
		{Name: "a", Points: []Point{{1, 2}, {2, 4}}},
		{Name: "bound", Points: []Point{{1, 1}, {2, 2}}, Dashed: true},
	}}
	var csv, table bytes.Buffer
	if err := f.WriteCSV(&csv); err != nil {
		t.Fatal(err)
	}
	if got, want := csv.String(), "series,x,y\na,1,2\na,2,4\nbound,1,1\nbound,2,2\n"; got != want {
		t.Fatalf("csv = %q, want %q", got, want)
	}
	if err := f.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(table.String()), "\n"); len(lines) != 3 || !strings.Contains(lines[2], "4") {
		t.Fatalf("table:\n%s", table.String())
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "fig")
	if err := f.Save(dir); err != nil {
		t.Fatal(err)
	}
	png, err := os.ReadFile(path + ".png")
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("no PNG written: %v", err)
	}
}
