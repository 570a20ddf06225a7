// The page's elements by id, and the message box over the page.

export const $ = (id) => document.getElementById(id);

export function showMessage(text) {
  const box = $("message");
  box.textContent = text;
  box.hidden = !text;
  clearTimeout(showMessage.timer);
  if (text) showMessage.timer = setTimeout(() => { box.hidden = true; }, 6000);
}
