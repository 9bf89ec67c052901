/** A text field of a submitted form, trimmed; '' when absent or a file. */
export function formText(form: FormData, name: string): string {
  const v = form.get(name);
  return typeof v === 'string' ? v.trim() : '';
}
