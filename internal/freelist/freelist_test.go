package freelist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sluicehq/sluice/internal/freelist"
)

func TestPop(t *testing.T) {
	a, b := new(int), new(int)
	list := []*int{a, b}
	assert.Same(t, b, freelist.Pop(&list), "last in, first out")
	assert.Nil(t, list[:2][1], "the slot left is cleared")
	assert.Same(t, a, freelist.Pop(&list))
	assert.Empty(t, list)
	assert.Nil(t, freelist.Pop(&list), "an empty list gives nil")
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		list = append(list, a)
		freelist.Pop(&list)
	}))
}
