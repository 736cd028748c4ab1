module github.com/lakelog/lakelog

go 1.26
