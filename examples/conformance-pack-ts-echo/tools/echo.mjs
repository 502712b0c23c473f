// conformance.echo for the official TypeScript pack service (benchmark twin): returns the
// message it was given. The service validates input and output against index.json.
export default async function echo(input) {
  return { message: input.message };
}
