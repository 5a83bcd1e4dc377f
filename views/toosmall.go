package views

import (
	"fmt"

	"github.com/charmbracelet/x/ansi"
)

// TooSmall replaces the whole screen when the terminal cannot hold the layout.
func TooSmall(w, h, needW, needH int, st Styles) string {
	size := fmt.Sprintf("need %d×%d, have %d×%d", needW, needH, w, h)
	if one := "terminal too small (" + size + ")"; ansi.StringWidth(one) <= w {
		return Center([]string{st.Warn.Render(one)}, w, h)
	}
	return Center([]string{st.Warn.Render("terminal too small"), st.Dim.Render(size)}, w, h)
}
