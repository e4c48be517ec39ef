package kwatchtest_test

import "github.com/kwatch/kwatch/watch"

func watchListOptions() watch.ListOptions { return watch.ListOptions{} }
