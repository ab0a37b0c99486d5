package db

// Checkpoints says who moves committed pages from a file's WAL back into
// the file. It is decided when the file is opened (Options.Checkpoints).
//
// Merge note: branch radcost brings the full version of this type (a
// background checkpointer per file, WAL limits) under the same names;
// this file then goes, and CheckpointExternal keeps meaning what it means
// here.
type Checkpoints int

const (
	// CheckpointSQLite: SQLite's automatic checkpoint on the commit that
	// crosses its threshold (1000 pages).
	CheckpointSQLite Checkpoints = iota
	// CheckpointExternal: another component owns the file's checkpoints
	// (Litestream, for a replicated file, checkpoints once its copy of the
	// WAL is safe: a checkpoint it did not see would cost it a full
	// snapshot); the file's connections never checkpoint on commit.
	CheckpointExternal
)
