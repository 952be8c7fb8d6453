module github.com/routerlab/routerlab

go 1.26.8
