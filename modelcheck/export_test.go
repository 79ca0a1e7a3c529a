package modelcheck

// SetPrefetch switches the seen-set's prefetch, for the benchmark that
// measures it; it returns the previous setting.
func SetPrefetch(on bool) bool { old := prefetching; prefetching = on; return old }

// SetHugePages switches the huge-page advice on large slot tables, for
// the benchmark that measures it; it returns the previous setting.
func SetHugePages(on bool) bool { old := hugePages; hugePages = on; return old }
