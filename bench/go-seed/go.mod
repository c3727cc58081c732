module ipallocator/bench/go-seed

go 1.19
