// The GraphQL operations the PR phase sends through `gh api graphql`, by name (the fake gh of the tests answers by it).

const PR = 'repository(owner: $owner, name: $name) { pullRequest(number: $number)'
const VARS = '$owner: String!, $name: String!, $number: Int!'
const PAGE = '$first: Int!, $after: String'
const PAGE_INFO = 'pageInfo { hasNextPage endCursor }'
const AUTHOR = 'author { login __typename }'
const COMMENT = `id databaseId ${AUTHOR} body createdAt lastEditedAt url pullRequestReview { databaseId }`

export const PR_HEAD = `query PrHead(${VARS}) { ${PR} { headRefOid } } }`

export const PR_META = `query PrMeta(${VARS}, ${PAGE}) { ${PR} {
  number url headRefOid headRefName baseRefName state mergeable reviewDecision mergedAt ${AUTHOR}
  commits(last: 1) { nodes { commit { oid statusCheckRollup { contexts(first: $first, after: $after) { ${PAGE_INFO}
    nodes { __typename ... on CheckRun { name status conclusion detailsUrl } ... on StatusContext { context state targetUrl } }
  } } } } }
} } }`

export const PR_THREADS = `query PrThreads(${VARS}, ${PAGE}) { ${PR} { reviewThreads(first: $first, after: $after) { ${PAGE_INFO}
  nodes { id path line isResolved isOutdated comments(first: $first) { ${PAGE_INFO} nodes { ${COMMENT} } } }
} } } }`

export const THREAD_COMMENTS = `query ThreadComments($id: ID!, ${PAGE}) { node(id: $id) { ... on PullRequestReviewThread {
  comments(first: $first, after: $after) { ${PAGE_INFO} nodes { ${COMMENT} } }
} } }`

export const PR_COMMENTS = `query PrComments(${VARS}, ${PAGE}) { ${PR} { comments(first: $first, after: $after) { ${PAGE_INFO}
  nodes { databaseId ${AUTHOR} body createdAt lastEditedAt url }
} } } }`

export const PR_REVIEWS = `query PrReviews(${VARS}, ${PAGE}) { ${PR} { reviews(first: $first, after: $after) { ${PAGE_INFO}
  nodes { databaseId ${AUTHOR} state body submittedAt lastEditedAt url }
} } } }`

export const RESOLVE_THREAD = `mutation ResolveThread($threadId: ID!) {
  resolveReviewThread(input: { threadId: $threadId }) { thread { id isResolved } }
}`
