// The page's elements by id, and the message box over the page.

export const $ = (id) => document.getElementById(id);

// shown for `seconds` (a longer sentence, longer)
export function showMessage(text, seconds = 6) {
  const box = $("message");
  box.textContent = text;
  box.hidden = !text;
  clearTimeout(showMessage.timer);
  if (text) showMessage.timer = setTimeout(() => { box.hidden = true; }, 1000 * seconds);
}
