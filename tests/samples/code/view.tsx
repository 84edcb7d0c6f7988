import React from "react";

type Props = { title: string };

// Renders a title.
export function Title({ title }: Props) {
  return <h1 className="title">{title}</h1>;
}

export const Page = ({ title }: Props) => (
  <main>
    <Title title={title} />
  </main>
);

class Counter extends React.Component<Props> {
  render() {
    return <span>{this.props.title}</span>;
  }
}
